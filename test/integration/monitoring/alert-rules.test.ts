// `promtool test rules` on the shipped alerts' unit tests (test/monitoring/alerts.promtool.yaml): every alert fires
// where it should, at the severity it should, and stays quiet elsewhere (a unit test checks each alert has both).
import { execFileSync } from "node:child_process";
import { expect } from "chai";
import { repositoryFile } from "../../harness/binaries.js";
import { requirePrometheusBinaries } from "../../harness/prometheus.js";

describe("alert rules under promtool test rules", () => {
  it("test/monitoring/alerts.promtool.yaml passes", () => {
    const { promtool } = requirePrometheusBinaries();
    const testsFile = repositoryFile("test/monitoring/alerts.promtool.yaml");
    let output: string;
    try {
      output = execFileSync(promtool, ["test", "rules", testsFile], { encoding: "utf8", stdio: "pipe" });
    } catch (error) {
      const failed = error as { stdout?: string; stderr?: string };
      throw new Error(`promtool test rules ${testsFile} failed:\n${failed.stdout ?? ""}${failed.stderr ?? ""}`);
    }
    expect(output).to.match(/SUCCESS/);
  });
});
