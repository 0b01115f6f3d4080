// Detection on pod statuses a real kubelet wrote (test/fixtures/kubelet, recorded from the real-node harness by
// `make fixtures-kubelet`): each stage of a validator failing for real, as the API server returned the pod.
import { readFileSync } from "node:fs";
import type { V1ContainerStatus } from "@kubernetes/client-node";
import { expect } from "chai";
import { detect } from "../../../src/detect/detect.js";
import type { PodFacts } from "../../../src/detect/facts.js";
import type { IstioRepairState } from "../../../src/detect/istio-repair-settings.js";
import { presetRule } from "../../../src/detect/presets.js";
import type { ValidatorRule } from "../../../src/detect/rule.js";
import { factsSchema, toPodFacts } from "../../../src/detect/to-pod-facts.js";
import { meshRepairCheck } from "../../../src/safety/mesh-repair-guard.js";
import { repositoryFile } from "../../harness/binaries.js";
import { backOffStatus, nextRunFailed, recordedPod } from "../../support/validator-runs.js";

const rules = [presetRule("istio"), presetRule("linkerd")] as ValidatorRule[];
const schema = factsSchema(rules);
const IN_PLACE: IstioRepairState = {
  kind: "detected",
  settings: {
    source: "ConfigMap kube-system/istio-cni-config",
    enabled: true,
    repairPods: true,
    deletePods: false,
    labelPods: false,
  },
};
const ABSENT: IstioRepairState = { kind: "absent" };

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
      startedAtMs: Date.parse("2026-12-04T13:04:34Z"),
      finishedAtMs: Date.parse("2026-12-04T13:04:38Z"),
    });
  });

  // The kubelet's restartCount is the newest run's attempt: 0 while the first failure is in `state`, 1 once the
  // second run started (its `lastState` is still the first failure) and while the second failure backs off.
  // Istio's repair acts on the first lastState it sees (the "restarted" status, run 1 already under way), so run 1's
  // failure (back-off) is no evidence however long the agent has been Ready: only a run started after that is.
  describe("Istio's fallback on the real statuses", () => {
    const NOW = Date.parse("2026-12-04T14:00:00Z");
    const judge = (facts: PodFacts, agentReadySinceMs: number, istio: IstioRepairState = IN_PLACE) => {
      const got = meshRepairCheck({
        istio,
        facts,
        validator: "istio-validation",
        agentReadySinceMs,
        minReadyMs: 10_000,
        nowMs: NOW,
      });
      return got?.kind === "hold" ? got.reason : got?.kind;
    };
    const factsOf = (file: string) => verdictOf(file).facts;
    /** The recorded crash-looping pod with this validator status, as toPodFacts sees it. */
    const factsWith = (status: V1ContainerStatus) => {
      const pod = recordedPod("istio-validator-back-off.json");
      const facts = toPodFacts({ ...pod, status: { ...pod.status, initContainerStatuses: [status] } }, schema);
      if (!facts) throw new Error("no facts");
      return facts;
    };
    // The recorded run 1 failed at 13:04:38; run 2 starts after the kubelet's 10 s back-off, run 3 after 20 s.
    const run1 = backOffStatus(Date.parse("2026-12-04T13:04:38Z"));
    const run2Failed = factsWith(nextRunFailed(run1, 10_000));
    const run3Failed = factsWith(nextRunFailed(nextRunFailed(run1, 10_000), 20_000));

    it("restartCount and lastState as recorded", () => {
      expect(factsOf("istio-validator-failed-once.json").initContainers[0]?.restartCount).to.equal(0);
      expect(factsOf("istio-validator-restarted.json").initContainers[0]?.restartCount).to.equal(1);
      expect(factsOf("istio-validator-back-off.json").initContainers[0]?.restartCount).to.equal(1);
      expect(factsWith(run1)).to.deep.equal(factsOf("istio-validator-back-off.json"));
      expect(run2Failed.initContainers[0]?.restartCount).to.equal(2);
    });

    it("without Istio's repair nothing is held", () => {
      expect(judge(factsOf("istio-validator-back-off.json"), Date.parse("2026-12-04T12:00:00Z"), ABSENT)).to.equal(
        undefined,
      );
    });

    for (const [agent, readySinceMs] of [
      ["an hour", Date.parse("2026-12-04T12:04:00Z")],
      ["seconds", Date.parse("2026-12-04T13:04:20Z")],
    ] as const) {
      describe(`the node's agent Ready for ${agent} when the validator first fails`, () => {
        it("the first failure, the running retry and the crash-looping pod (lastState 126, restartCount 1) are held", () => {
          expect(judge(factsOf("istio-validator-failed-once.json"), readySinceMs)).to.equal("mesh_repair_pending");
          expect(judge(factsOf("istio-validator-restarted.json"), readySinceMs)).to.equal("mesh_repair_pending");
          expect(judge(factsOf("istio-validator-back-off.json"), readySinceMs)).to.equal("mesh_repair_pending");
        });

        it("deleted as Istio's fallback once a later run (2) failed", () => {
          expect(judge(run2Failed, readySinceMs)).to.equal("fallback");
        });

        it("a restartPolicy Never pod is the fallback at once", () => {
          expect(judge(factsOf("istio-never-failed.json"), readySinceMs)).to.equal("fallback");
        });
      });
    }

    it("an agent that turned Ready only just before run 2 started: run 2 is no evidence, run 3 is", () => {
      const run2Start = run2Failed.initContainers[0]?.lastTermination?.startedAtMs ?? Number.NaN;
      expect(judge(run2Failed, run2Start - 5_000)).to.equal("mesh_repair_pending");
      expect(judge(run3Failed, run2Start - 5_000)).to.equal("fallback");
    });
  });
});
