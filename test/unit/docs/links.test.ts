// Every relative link of the README and docs/ resolves: the file exists and a #fragment names a heading there.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { expect } from "chai";
import { brokenLinks, DOCUMENTATION } from "../../docs/markdown-links.js";
import { repositoryFile } from "../../harness/binaries.js";
import { ownedTempDir } from "../../harness/owned-dirs.js";

describe("links in README.md and docs/", function () {
  // Parses every Markdown file of the repository's documentation: seconds on a loaded machine.
  this.timeout(60_000);
  it("all resolve, headings included", async () => {
    const root = dirname(repositoryFile("package.json"));
    expect(await brokenLinks(root, DOCUMENTATION)).to.deep.equal([]);
  });

  describe("the check itself", () => {
    let dir = "";
    before(() => {
      dir = ownedTempDir("cni-repair-links-");
      mkdirSync(join(dir, "docs"));
      writeFileSync(
        join(dir, "README.md"),
        [
          "# Title",
          "",
          "| a | b |",
          "|---|---|",
          "| [ok](docs/guide.md#real-heading) | [no heading](docs/guide.md#missing-heading) |",
          "",
          "[no file](docs/gone.md) [own heading](#title) [no own heading](#nothing) [web](https://example.org/x#y)",
          "",
        ].join("\n"),
      );
      writeFileSync(join(dir, "docs", "guide.md"), "# Guide\n\n## Real heading\n\n[back](../README.md#title)\n");
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it("reports a missing file, a missing heading in another file and in the same file, and nothing else", async () => {
      const broken = await brokenLinks(dir, ["README.md", "docs"]);
      expect(broken).to.have.length(3);
      expect(broken[0]).to.match(/^README\.md:5:\d+ .*`#missing-heading` in `docs\/guide\.md`/);
      expect(broken[1]).to.match(/^README\.md:7:\d+ .*`docs\/gone\.md`/);
      expect(broken[2]).to.match(/^README\.md:7:\d+ .*`#nothing`/);
    });
  });
});
