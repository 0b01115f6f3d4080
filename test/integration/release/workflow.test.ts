// The release pipeline (.github/workflows/release.yml) cannot run here, so it is checked as a file: actionlint
// (built from the Go module proxy) finds nothing, and every build step is a make target of this repository that
// the tests run too (make test; make chart-package in the chart's install test; make image in the image tests).
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { loadYaml } from "@kubernetes/client-node";
import { expect } from "chai";
import { repositoryFile } from "../../harness/binaries.js";
import { runToEnd } from "../../harness/run-to-end.js";

type Step = { name?: string; uses?: string; run?: string };
type Workflow = { on: unknown; jobs: Record<string, { needs?: string | string[]; steps: Step[] }> };

const root = dirname(repositoryFile("Makefile"));
const workflowsDir = join(root, ".github", "workflows");

function actionlint(): string {
  const dir = execFileSync(repositoryFile("tools/build.sh"), ["actionlint"], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
  return join(dir, "actionlint");
}

describe("release workflow", function () {
  // The first call may build actionlint (cached afterwards).
  this.timeout(10 * 60_000);
  const workflow = loadYaml<Workflow>(readFileSync(join(workflowsDir, "release.yml"), "utf8"));
  const runs = Object.values(workflow.jobs).flatMap((job) => job.steps.flatMap((step) => step.run ?? []));
  /** "make <target>" at the start of any line of a run step, or after a sudo that starts it. */
  const makeTargets = runs.flatMap((run) =>
    [...run.matchAll(/^\s*(?:sudo\s.*?\s)?make (\S+)/gm)].map((match) => match[1] ?? ""),
  );

  it("actionlint (with shellcheck) finds nothing in any workflow", async () => {
    const files = readdirSync(workflowsDir).filter((name) => /\.ya?ml$/.test(name));
    expect(files).to.include("release.yml");
    // With shellcheck (make tools installs it), actionlint also checks every run: script.
    const shellcheck = execFileSync("sh", ["-c", "command -v shellcheck || true"], { encoding: "utf8" }).trim();
    expect(shellcheck, "shellcheck on PATH (make tools)").to.not.equal("");
    const result = await runToEnd(actionlint(), [
      "-no-color",
      "-oneline",
      `-shellcheck=${shellcheck}`,
      ...files.map((file) => join(workflowsDir, file)),
    ]);
    expect(`${result.stdout}${result.stderr}`).to.equal("");
    expect(result.code).to.equal(0);
  });

  it("runs on version tags: the tests first, then image, signature, SBOM and chart", () => {
    expect(JSON.stringify(workflow.on)).to.include("tags");
    expect(workflow.jobs.publish?.needs).to.equal("test");
    expect(makeTargets).to.deep.equal(["test", "image", "chart-package"]);
    // The tests run as root: the real-node tests start a kubelet and containerd.
    const tests = (workflow.jobs.test?.steps ?? []).map((step) => step.run ?? "").join("\n");
    expect(tests).to.match(/^sudo --preserve-env env "PATH=\$PATH" make test$/m);
    const publish = (workflow.jobs.publish?.steps ?? []).map((step) => step.run ?? step.uses ?? "").join("\n");
    expect(publish).to.match(/sigstore\/cosign-installer@[0-9a-f]{40}/);
    expect(publish).to.match(/cosign sign --yes "\$IMAGE@\$DIGEST"/);
    expect(publish).to.match(/cosign attest --yes --type spdxjson --predicate "\$sbom" "\$IMAGE@\$DIGEST"/);
    expect(publish).to.match(/make image VERSION="\$VERSION" IMAGE_PUSH="\$IMAGE:\$VERSION"/);
    expect(publish).to.match(/"\$helm" push "dist\/chart\/cni-repair-\$VERSION\.tgz" "\$CHARTS"/);
    // Third-party actions are pinned by commit.
    const uses = Object.values(workflow.jobs).flatMap((job) => job.steps.flatMap((step) => step.uses ?? []));
    for (const action of uses) expect(action, action).to.match(/@[0-9a-f]{40}$/);
  });

  it("every make target the workflow calls exists (make -n knows it)", async () => {
    for (const target of makeTargets) {
      const result = await runToEnd("make", ["-C", root, "-n", target, "VERSION=0.0.0-test"]);
      expect(result.stderr, `make ${target}`).to.not.match(/No rule to make target/);
      expect(result.code, `make -n ${target}: ${result.stderr}`).to.equal(0);
    }
  });
});
