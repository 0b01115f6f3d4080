// Detection and the coexistence guard on the statuses the real kubelet wrote for Istio's real validator (pilot-agent's
// istio-iptables validation, built from Istio's sources) and after Istio's real CNI agent repaired the pod in place
// (test/fixtures/kubelet/istio-real, `make fixtures-istio`; the Istio version is in its source.json).
import { readFileSync } from "node:fs";
import { expect } from "chai";
import { detect } from "../../../src/detect/detect.js";
import type { PodFacts } from "../../../src/detect/facts.js";
import type { IstioRepairState } from "../../../src/detect/istio-repair-settings.js";
import { presetRule } from "../../../src/detect/presets.js";
import type { ValidatorRule } from "../../../src/detect/rule.js";
import { factsSchema, toPodFacts } from "../../../src/detect/to-pod-facts.js";
import { meshRepairCheck } from "../../../src/safety/mesh-repair-guard.js";
import { repositoryFile } from "../../harness/binaries.js";

const rules = [presetRule("istio")] as ValidatorRule[];
const schema = factsSchema(rules);

function factsOf(file: string): PodFacts {
  const raw = JSON.parse(readFileSync(repositoryFile(`test/fixtures/kubelet/istio-real/${file}`), "utf8"));
  const facts = toPodFacts(raw as Record<string, unknown>, schema);
  if (!facts) throw new Error(`${file}: no facts`);
  return facts;
}
const validatorOf = (facts: PodFacts) => facts.initContainers.find((c) => c.name === "istio-validation");

describe("detection on the statuses of Istio's real validator and agent (test/fixtures/kubelet/istio-real)", () => {
  const broken = (reason: string, terminal = false) => ({ broken: true, rule: "istio", reason, terminal });

  it("each stage of the validator failing: state on the first failure, lastState once restarted, terminal under Never", () => {
    expect(detect(factsOf("validator-failed-once.json"), rules)).to.deep.equal(
      broken("istio-validation exited 126 (state)"),
    );
    expect(detect(factsOf("validator-back-off.json"), rules)).to.deep.equal(
      broken("istio-validation exited 126 (lastState)"),
    );
    expect(detect(factsOf("validator-restarted.json"), rules)).to.deep.equal(
      broken("istio-validation exited 126 (lastState)"),
    );
    expect(detect(factsOf("never-failed.json"), rules)).to.deep.equal(
      broken("istio-validation exited 126 (state)", true),
    );
  });

  it("the restart counts the kubelet wrote: 0 on the first failure, 1 from the second run on", () => {
    expect(validatorOf(factsOf("validator-failed-once.json"))?.restartCount).to.equal(0);
    expect(validatorOf(factsOf("validator-back-off.json"))?.restartCount).to.be.at.least(1);
    expect(validatorOf(factsOf("validator-restarted.json"))?.restartCount).to.be.at.least(1);
  });

  it("a pod started after Istio's agent was Ready passed on its first run: not broken", () => {
    expect(validatorOf(factsOf("healthy.json"))?.restartCount).to.equal(0);
    expect(detect(factsOf("healthy.json"), rules)).to.deep.equal({ broken: false });
  });

  it("after Istio's real in-place repair the validator's next run passed (restarted, now Completed): not broken", () => {
    const facts = factsOf("validator-passed-after-repair.json");
    const validator = validatorOf(facts);
    expect(validator?.restartCount).to.be.at.least(1);
    expect(validator?.state).to.deep.include({ exitCode: 0 });
    expect(detect(facts, rules)).to.deep.equal({ broken: false });
  });

  it("the crash loop going on after Istio's agent was Ready (its in-place repair failed: no network namespace found): still broken, by lastState", () => {
    const facts = factsOf("validator-failed-after-agent-ready.json");
    expect(validatorOf(facts)?.restartCount).to.be.at.least(2);
    expect(validatorOf(facts)?.state).to.equal("waiting");
    expect(detect(facts, rules)).to.deep.equal(broken("istio-validation exited 126 (lastState)"));
  });

  it("Istio's validator leaves no termination message (terminationMessagePolicy File; it writes to stderr)", () => {
    expect(validatorOf(factsOf("validator-back-off.json"))?.lastTermination?.message).to.equal(undefined);
  });
});

describe("the coexistence guard on the real statuses, Istio repairing in place", () => {
  const istio: IstioRepairState = {
    kind: "detected",
    settings: {
      source: "ConfigMap istio-system/istio-cni-config",
      enabled: true,
      repairPods: true,
      deletePods: false,
      labelPods: false,
    },
  };
  /** The race as it ran: the agent turned Ready after the recorded failure, and we look shortly after. */
  function check(file: string) {
    const facts = factsOf(file);
    const finished = validatorOf(facts)?.lastTermination?.finishedAtMs ?? Date.parse("2026-01-01T00:00:00Z");
    return meshRepairCheck({
      istio,
      facts,
      validator: "istio-validation",
      agentReadySinceMs: finished + 2_000,
      minReadyMs: 10_000,
      nowMs: finished + 5_000,
    });
  }

  it("a crash-looping pod whose failures all predate the agent is left to Istio (mesh_repair_pending)", () => {
    for (const file of ["validator-back-off.json", "validator-restarted.json"]) {
      const got = check(file);
      expect(got?.kind, file).to.equal("hold");
      expect(got?.kind === "hold" && got.reason, file).to.equal("mesh_repair_pending");
    }
  });

  it("a failure of a run that started after the agent had been Ready for min-ready and Istio's grace is the fallback's evidence", () => {
    const source = JSON.parse(readFileSync(repositoryFile("test/fixtures/kubelet/istio-real/source.json"), "utf8")) as {
      agentReadyAt: string;
    };
    const facts = factsOf("validator-failed-after-agent-ready.json");
    const finished = validatorOf(facts)?.lastTermination?.finishedAtMs ?? 0;
    const got = meshRepairCheck({
      istio,
      facts,
      validator: "istio-validation",
      agentReadySinceMs: Date.parse(source.agentReadyAt),
      minReadyMs: 10_000,
      nowMs: finished + 1_000,
    });
    expect(got?.kind === "fallback" && got.basis).to.equal("failed_again");
  });

  it("a restartPolicy Never pod is deleted as Istio's fallback: its validator never runs again", () => {
    const got = check("never-failed.json");
    expect(got?.kind === "fallback" && got.basis).to.equal("never_restarts");
  });
});
