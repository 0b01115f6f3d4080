// A committed `it.only` or `it.skip` must fail the run, not make it pass on a subset: both mocha configs forbid
// them (Biome's noFocusedTests/noSkippedTests fail `make lint` too, at the source).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { repositoryFile } from "../../harness/binaries.js";
import { runToEnd } from "../../harness/run-to-end.js";

const CONFIGS = ["test/mocharc.unit.json", "test/mocharc.integration.json"];
const PLAIN = 'it("one", () => {});\n';
const FORBIDDEN = {
  "it.only": `${PLAIN}it.only("the other", () => {});\n`,
  "it.skip": `${PLAIN}it.skip("the other", () => {});\n`,
};

describe("mocha configs: focused and skipped tests fail the run", function () {
  this.timeout(60_000); // six mocha processes, each a Node start-up
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "focused-tests-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** Runs mocha with `config`'s settings on one spec (its own spec list and root hooks left out). */
  const runWith = async (config: string, name: string, spec: string) => {
    const { spec: _spec, require: _require, ...settings } = JSON.parse(readFileSync(repositoryFile(config), "utf8"));
    const specFile = join(dir, `${name}.test.cjs`);
    const configFile = join(dir, `${name}.mocharc.json`);
    writeFileSync(specFile, spec);
    writeFileSync(configFile, JSON.stringify({ ...settings, spec: [specFile] }));
    const mocha = repositoryFile("node_modules/mocha/bin/mocha.js");
    return await runToEnd(process.execPath, [mocha, "--config", configFile]);
  };

  for (const config of CONFIGS) {
    it(`${config}: a spec with it.only or it.skip fails; the same spec without passes`, async () => {
      const name = config.replace(/\W/g, "-");
      const [plain, ...forbidden] = await Promise.all([
        runWith(config, `${name}-plain`, PLAIN),
        ...Object.entries(FORBIDDEN).map(([what, spec]) => runWith(config, `${name}-${what}`, spec)),
      ]);
      expect(plain?.code, "the probe without them").to.equal(0);
      for (const run of forbidden) {
        expect(run.code, run.stdout + run.stderr).to.equal(1);
        expect(run.stdout + run.stderr).to.match(/ERR_MOCHA_FORBIDDEN_EXCLUSIVITY|Pending test forbidden/);
      }
    });
  }
});
