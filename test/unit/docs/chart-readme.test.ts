// charts/cni-repair/README.md lists every value of values.yaml, each with its default, and no value that does not
// exist. A value is a key whose schema (values.schema.json) gives it no properties of its own: a scalar, a list, or
// a free-form map (labels, resources); keys with properties are descended into. Its links into this repository
// (absolute, so they work where the packaged chart's README is shown) name files and headings that exist.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { loadYaml } from "@kubernetes/client-node";
import { expect } from "chai";
import GithubSlugger from "github-slugger";
import { repositoryFile } from "../../harness/binaries.js";

type Schema = { readonly properties?: Readonly<Record<string, Schema>> };

/** Each value's dotted path and default, in the file's order. */
function chartValues(values: unknown, schema: Schema, path: readonly string[] = []): [string, unknown][] {
  const isMap = typeof values === "object" && values !== null && !Array.isArray(values);
  if (!isMap || !schema.properties || Object.keys(values).length === 0) return [[path.join("."), values]];
  return Object.entries(values).flatMap(([key, value]) =>
    chartValues(value, schema.properties?.[key] ?? {}, [...path, key]),
  );
}

/** A default as the README writes it: a string as it is (`""` when empty), anything else as JSON. */
function writtenDefault(value: unknown): string {
  if (typeof value === "string") return value === "" ? '`""`' : `\`${value}\``;
  return `\`${JSON.stringify(value).replaceAll(",", ", ").replaceAll('":', '": ')}\``;
}

const REPOSITORY = "https://github.com/cni-repair/cni-repair/blob/main/";

describe("charts/cni-repair/README.md", () => {
  const readme = readFileSync(repositoryFile("charts/cni-repair/README.md"), "utf8");
  const values = chartValues(
    loadYaml(readFileSync(repositoryFile("charts/cni-repair/values.yaml"), "utf8")),
    JSON.parse(readFileSync(repositoryFile("charts/cni-repair/values.schema.json"), "utf8")) as Schema,
  );
  const rows = new Map(
    [...readme.matchAll(/^\| `([\w.]+)` \| (.+?) \| (.+) \|$/gm)].map((match) => [
      match[1] ?? "",
      { default: match[2] ?? "", meaning: match[3] ?? "" },
    ]),
  );

  it("finds the values and the rows to compare", () => {
    expect(values.length).to.be.greaterThan(80);
    expect(rows.size).to.be.greaterThan(80);
  });

  it("has a row for every value, with its default and a meaning", () => {
    const missing = values
      .filter(([path]) => !rows.has(path))
      .map(([path, value]) => `| \`${path}\` | ${writtenDefault(value)} | <what it does> |`);
    expect(missing, "add these rows to charts/cni-repair/README.md").to.deep.equal([]);
    for (const [path, value] of values) {
      expect(rows.get(path)?.default, `${path}'s default`).to.equal(writtenDefault(value));
      expect(rows.get(path)?.meaning.trim(), `${path}'s meaning`).to.not.equal("");
    }
  });

  it("has no row for a value that does not exist", () => {
    const known = new Set(values.map(([path]) => path));
    expect([...rows.keys()].filter((path) => !known.has(path))).to.deep.equal([]);
  });

  it("links only to files and headings of this repository that exist", () => {
    const root = dirname(repositoryFile("package.json"));
    const links = [...readme.matchAll(/\]\((https:\/\/github\.com\/cni-repair\/cni-repair\/[^)]+)\)/g)].map(
      (match) => match[1] ?? "",
    );
    expect(links.length).to.be.greaterThan(3);
    for (const link of links) {
      expect(link, "links point at main's files").to.satisfy((text: string) => text.startsWith(REPOSITORY));
      const [path = "", anchor] = link.slice(REPOSITORY.length).split("#");
      expect(existsSync(join(root, path)), link).to.equal(true);
      if (anchor === undefined) continue;
      const slugger = new GithubSlugger();
      const headings = [...readFileSync(join(root, path), "utf8").matchAll(/^#{1,6} (.+)$/gm)].map((match) =>
        slugger.slug(match[1] ?? ""),
      );
      expect(headings, link).to.include(anchor);
    }
  });

  describe("the check itself", () => {
    it("descends into keys with properties only, and writes defaults as the README does", () => {
      const schema = { properties: { a: { properties: { b: {} } }, labels: {} } };
      expect(chartValues({ a: { b: "" }, labels: { x: "1" }, c: [1, 2] }, schema)).to.deep.equal([
        ["a.b", ""],
        ["labels", { x: "1" }],
        ["c", [1, 2]],
      ]);
      expect([
        writtenDefault(""),
        writtenDefault("x"),
        writtenDefault(null),
        writtenDefault({ a: "1", b: 2 }),
      ]).to.deep.equal(['`""`', "`x`", "`null`", '`{"a": "1", "b": 2}`']);
    });
  });
});
