// Detection on pod statuses a real kubelet wrote (test/fixtures/kubelet, recorded from the real-node harness by
// `make fixtures-kubelet`): each stage of a validator failing for real, as the API server returned the pod.
import { readFileSync } from "node:fs";
import { expect } from "chai";
import { detect } from "../../../src/detect/detect.js";
import { presetRule } from "../../../src/detect/presets.js";
import type { ValidatorRule } from "../../../src/detect/rule.js";
import { factsSchema, toPodFacts } from "../../../src/detect/to-pod-facts.js";
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
    });
  });
});
