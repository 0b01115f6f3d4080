// Detection on pod statuses a real kubelet wrote (test/fixtures/kubelet, recorded from the real-node harness by
// `make fixtures-kubelet`): each stage of a validator failing for real, as the API server returned the pod.
import { readFileSync } from "node:fs";
import { expect } from "chai";
import { detect } from "../../../src/detect/detect.js";
import { presetRule } from "../../../src/detect/presets.js";
import type { ValidatorRule } from "../../../src/detect/rule.js";
import { factsSchema, toPodFacts } from "../../../src/detect/to-pod-facts.js";
import { meshRepairCheck } from "../../../src/safety/mesh-repair-guard.js";
import { repositoryFile } from "../../harness/binaries.js";

const rules = [presetRule("istio"), presetRule("linkerd")] as ValidatorRule[];
const schema = factsSchema(rules);

function recorded(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(repositoryFile(`test/fixtures/kubelet/${file}`), "utf8")) as Record<string, unknown>;
}

function verdictOf(file: string) {
  const facts = toPodFacts(recorded(file), schema);
  if (!facts) throw new Error(`${file}: no facts`);
  return { facts, verdict: detect(facts, rules) };
}

describe("detection on statuses recorded from a real kubelet", () => {
  const broken = (rule: string, reason: string, terminal = false) => ({ broken: true, rule, reason, terminal });
  const cases: [string, string, unknown][] = [
    // Before its first restart the failed validator is in `state` even under restartPolicy Always.
    [
      "failed once, not restarted yet",
      "istio-validator-failed-once.json",
      broken("istio", "istio-validation exited 126 (state)"),
    ],
    [
      "in CrashLoopBackOff",
      "istio-validator-back-off.json",
      broken("istio", "istio-validation exited 126 (lastState)"),
    ],
    [
      "restarted, running again",
      "istio-validator-restarted.json",
      broken("istio", "istio-validation exited 126 (lastState)"),
    ],
    [
      "restartPolicy Never, failed for good",
      "istio-never-failed.json",
      broken("istio", "istio-validation exited 126 (state)", true),
    ],
    [
      "Linkerd's validator in CrashLoopBackOff",
      "linkerd-validator-back-off.json",
      broken("linkerd", "linkerd-network-validator exited 95 (lastState)"),
    ],
  ];
  for (const [name, file, expected] of cases) {
    it(`${name}: ${file}`, () => {
      expect(verdictOf(file).verdict).to.deep.equal(expected);
    });
  }

  it("a pod whose validator passed (the agent was Ready) is not broken", () => {
    expect(verdictOf("istio-healthy.json").verdict.broken).to.equal(false);
  });

  it("a deleted pod still terminating is deleting, not broken: its validator keeps retrying meanwhile", () => {
    const { facts, verdict } = verdictOf("istio-validator-terminating.json");
    expect(facts.deleting).to.equal(true);
    expect(facts.initContainers[0]?.state).to.equal("running");
    expect(verdict).to.deep.equal({ broken: false });
  });

  it("the real kubelet writes no termination message for the validator (terminationMessagePolicy File)", () => {
    const { facts } = verdictOf("istio-validator-back-off.json");
    expect(facts.initContainers[0]?.lastTermination).to.deep.equal({
      exitCode: 126,
      reason: "Error",
      message: undefined,
      finishedAtMs: Date.parse("2026-12-04T13:04:38Z"),
    });
  });

  // The kubelet's restartCount is the newest run's attempt: 0 while the first failure is in `state`, 1 once the
  // second run started (its `lastState` is still the first failure) and while the second failure backs off.
  it("Istio's fallback on the real statuses: the first failure and a running retry are left to Istio, a repeated failure or a Never pod are not", () => {
    const agentReadySinceMs = Date.parse("2026-12-04T12:00:00Z");
    const check = (file: string) =>
      meshRepairCheck({
        istio: { kind: "absent" },
        facts: verdictOf(file).facts,
        validator: "istio-validation",
        agentReadySinceMs,
        minReadyMs: 10_000,
        nowMs: Date.parse("2026-12-04T14:00:00Z"),
      });
    const inPlace = (file: string) => {
      const got = meshRepairCheck({
        istio: { kind: "unknown", why: "test" },
        facts: verdictOf(file).facts,
        validator: "istio-validation",
        agentReadySinceMs,
        minReadyMs: 10_000,
        nowMs: Date.parse("2026-12-04T14:00:00Z"),
      });
      return got?.kind === "hold" ? got.reason : got?.kind;
    };
    expect(check("istio-validator-back-off.json")).to.equal(undefined);
    expect(verdictOf("istio-validator-failed-once.json").facts.initContainers[0]?.restartCount).to.equal(0);
    expect(inPlace("istio-validator-failed-once.json")).to.equal("mesh_repair_pending");
    expect(inPlace("istio-validator-restarted.json")).to.equal("mesh_repair_pending");
    expect(inPlace("istio-validator-back-off.json")).to.equal("fallback");
    expect(inPlace("istio-never-failed.json")).to.equal("fallback");
  });
});
