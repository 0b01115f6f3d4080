// A scenario the bench leaves out is said, and a smoke run fails on one it could not run (not on one asked away).
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { findIstioRepair } from "../../../bench/lib/istio-repair.js";
import { Skips } from "../../../bench/lib/skips.js";

describe("bench: skipped scenarios", () => {
  it("says each skip in the log, counts only the ones not asked for, and warns on GitHub Actions", () => {
    const said: string[] = [];
    const printed: string[] = [];
    const skips = new Skips(
      (line) => said.push(line),
      { GITHUB_ACTIONS: "true" },
      (line) => printed.push(line),
    );
    skips.skip("Istio's repair controller in the side-by-side runs", "BENCH_ISTIO_REPAIR=off", true);
    skips.skip("the mass repair with default limits", "cni-repair has no deletion limits yet", false);
    expect(said).to.deep.equal([
      "SKIPPED Istio's repair controller in the side-by-side runs: BENCH_ISTIO_REPAIR=off",
      "SKIPPED the mass repair with default limits: cni-repair has no deletion limits yet (not asked for: a smoke run fails)",
    ]);
    expect(skips.unasked.map((skip) => skip.what)).to.deep.equal(["the mass repair with default limits"]);
    expect(printed).to.have.length(2);
    expect(printed[0]).to.match(/^::warning title=bench skipped a scenario::Istio's repair controller/);
  });

  it("prints no workflow command outside GitHub Actions", () => {
    const printed: string[] = [];
    new Skips(
      () => {},
      {},
      (line) => printed.push(line),
    ).skip("x", "y", true);
    expect(printed).to.deep.equal([]);
  });

  describe("findIstioRepair", () => {
    let dir: string;
    before(() => {
      dir = mkdtempSync(join(tmpdir(), "istio-repair-"));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it("BENCH_ISTIO_REPAIR=off: none, asked for", () => {
      expect(findIstioRepair({ BENCH_ISTIO_REPAIR: "off" })).to.deep.equal({
        binary: undefined,
        why: "BENCH_ISTIO_REPAIR=off",
        asked: true,
      });
    });

    it("a given path that is not an executable: none, not asked for, the path named", () => {
      const path = join(dir, "missing");
      expect(findIstioRepair({ BENCH_ISTIO_REPAIR: path })).to.deep.equal({
        binary: undefined,
        why: `BENCH_ISTIO_REPAIR=${path} is not an executable file`,
        asked: false,
      });
    });

    it("a given executable is the binary", () => {
      const path = join(dir, "istio-repair");
      writeFileSync(path, "#!/bin/sh\n");
      chmodSync(path, 0o755);
      expect(findIstioRepair({ BENCH_ISTIO_REPAIR: path })).to.deep.equal({ binary: path });
    });
  });
});
