// The bundled app's code cache: made with every function compiled, taken only for the source it was made from, and
// refused by V8 under other flags; in each case the app still runs.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Script } from "node:vm";
import { expect } from "chai";
import { codeCacheFile, compileApp, makeCodeCache } from "../../../src/boot/code-cache.js";

const codeCacheModule = fileURLToPath(new URL("../../../src/boot/code-cache.js", import.meta.url));
const APP = [
  "const double = (n) => n * 2;",
  "function answer() { return [1, 2, 3].map((n) => double(n)).reduce((a, b) => a + b, 0) * 3.5; }",
  "module.exports.answer = answer();",
  "module.exports.file = __filename;",
  "module.exports.builtin = typeof require('node:path').join;",
].join("\n");

/** Compiles and runs the app as a start does; what it exported, and the cache's verdict. */
function start(app: string): { verdict: string; exports: Record<string, unknown> } {
  const { run, verdict } = compileApp(app);
  const appModule = { exports: {} as Record<string, unknown> };
  run(appModule.exports, createRequire(app), appModule, app, join(app, ".."));
  return { verdict, exports: appModule.exports };
}

/** The same in a fresh node with `nodeFlags`. */
function startInChild(app: string, nodeFlags: string[]): { verdict: string; answer: number } {
  const script = [
    `const { compileApp } = await import(${JSON.stringify(codeCacheModule)});`,
    `const { run, verdict } = compileApp(${JSON.stringify(app)});`,
    "const m = { exports: {} };",
    `run(m.exports, (await import("node:module")).createRequire(${JSON.stringify(app)}), m, "", "");`,
    "console.log(JSON.stringify({ verdict, answer: m.exports.answer }));",
  ].join("\n");
  return JSON.parse(
    execFileSync(process.execPath, [...nodeFlags, "--input-type=module", "-e", script], { encoding: "utf8" }),
  );
}

describe("the bundled app's code cache", () => {
  let dir: string;
  let app: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "code-cache-"));
    app = join(dir, "app.js");
    writeFileSync(app, APP);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const writeCache = () => writeFileSync(codeCacheFile(app), makeCodeCache(Buffer.from(APP), "app.js"));

  it("lives beside the app, one per architecture", () => {
    expect(codeCacheFile("/app/dist/src/cli/app.js", "arm64")).to.equal("/app/dist/src/cli/app.js.arm64.v8cache");
  });

  it("is taken by a start when made for its source, and the app runs as a CommonJS module under its own name", () => {
    writeCache();
    expect(start(app)).to.deep.equal({ verdict: "accepted", exports: { answer: 42, file: app, builtin: "function" } });
  });

  it("holds the functions a start calls, not only the top level Node's compile cache would keep", () => {
    const wrapped = `(function (exports, require, module, __filename, __dirname) { ${APP}\n})`;
    const topLevelOnly = new Script(wrapped, { filename: "app.js" }).createCachedData();
    // The header (~90 bytes) aside, the eager cache carries the bytecode of answer, double and the arrows as well.
    expect(makeCodeCache(Buffer.from(APP), "app.js").length - 100).to.be.above(topLevelOnly.length);
  });

  it("made in this process is accepted by a fresh node: the flags it compiles under are reset before it is made", () => {
    writeCache();
    expect(startInChild(app, [])).to.deep.equal({ verdict: "accepted", answer: 42 });
  });

  it("is refused by V8 under other V8 flags, and the app compiles from source as without one", () => {
    writeCache();
    expect(startInChild(app, ["--no-opt"])).to.deep.equal({ verdict: "rejected", answer: 42 });
  });

  it("is stale for another source of the same length (V8 checks the length only): the app runs from its source", () => {
    writeCache();
    const other = APP.replace("* 3.5", "* 2.5");
    expect(other.length).to.equal(APP.length);
    writeFileSync(app, other);
    expect(start(app)).to.deep.include({ verdict: "stale" });
    expect(start(app).exports.answer).to.equal(30);
  });

  it("absent: the app runs from its source", () => {
    expect(start(app)).to.deep.include({ verdict: "absent" });
    expect(start(app).exports.answer).to.equal(42);
  });
});
