// Whether an agent outage explains a pod's breakage, as the storm breaker counts it, is judged from the pod's own
// times (its sandbox against the agent's Ready time), so the same pods count the same whenever they are judged:
// just before the agent's window closes, just after it, or some of each. Before, it was judged by the moment, and
// a grace timer firing a few milliseconds either side of that edge decided whether the node's breaker opened.

import { expect } from "chai";
import { Registry } from "prom-client";
import { NO_CONTEXT } from "../../../src/detect/detect.js";
import { type PodFacts, podKey } from "../../../src/detect/facts.js";
import { presetRule } from "../../../src/detect/presets.js";
import type { Rule } from "../../../src/detect/rule.js";
import { CniAgents } from "../../../src/informer/cni-agent-pods.js";
import { createMetrics } from "../../../src/observe/metrics.js";
import { Safety } from "../../../src/safety/safety.js";
import type { StormCounts } from "../../../src/safety/storm-breaker.js";
import { cniReadiness } from "../../support/agent-readiness.js";
import { exited, init, istioPod } from "../../support/pod-builders.js";
import { guardsOff, TEST_LABEL } from "../../support/test-reconciler.js";
import { FakeClock } from "../fake-clock.js";

const SECOND = 1_000;
const START = Date.parse("2026-12-05T10:00:00Z");
const MIN_READY = 10 * SECOND;
/** The agent turned Ready at START: its outage explains pods set up before START + min-ready + 60 s. */
const EDGE = START + MIN_READY + 60 * SECOND;
const PODS = 4;

/** The counts on node-a after PODS broken pods set up at `sandboxAtMs` are seen broken at the given moments. */
function countsAfter(sandboxAtMs: number, judgedAtMs: readonly number[]): StormCounts {
  const clock = new FakeClock(START);
  const agents = new CniAgents();
  agents.store.upsert({
    namespace: "istio-system",
    name: "istio-cni-node-a",
    nodeName: "node-a",
    readySinceMs: START,
    seenReadyAtMs: START,
  });
  const safety = new Safety({
    ...guardsOff({
      storm: { maxBrokenFraction: 0.5, minBroken: 3 },
      readiness: cniReadiness(agents, MIN_READY, { clock }),
      clock,
    }),
    rules: [presetRule("istio") as Rule],
    mode: "delete",
    label: TEST_LABEL,
    deleteBarePods: false,
    metrics: createMetrics(new Registry(), { ruleNames: ["istio"], version: "test" }),
    context: () => ({ ...NO_CONTEXT, nowMs: clock.now() }),
  });
  judgedAtMs.forEach((atMs, index) => {
    clock.advance(atMs - clock.now());
    const broken: PodFacts = istioPod([init("istio-validation", "waiting", exited(126))], {
      name: `reviews-${index}`,
      uid: `uid-${index}`,
      nodeName: "node-a",
      createdAtMs: sandboxAtMs,
      sandboxSinceMs: sandboxAtMs,
    });
    safety.observe({ key: podKey(broken.namespace, broken.name), previous: undefined, current: broken });
  });
  return safety.storm.counts("node", "node-a");
}

describe("safety: an agent outage explains breakage by the pod's times, not by when it is judged", () => {
  const before = Array.from({ length: PODS }, (_, i) => EDGE - PODS + i);
  const after = Array.from({ length: PODS }, (_, i) => EDGE + i);
  const straddling = Array.from({ length: PODS }, (_, i) => EDGE - 2 + i);

  it("pods set up during the outage count as explained whether judged before, after or across the edge", () => {
    const duringOutage = START - 60 * SECOND;
    const expected = { meshed: PODS, broken: 0, explained: PODS, lingering: 0 };
    expect(countsAfter(duringOutage, before), "judged before the edge").to.deep.equal(expected);
    expect(countsAfter(duringOutage, after), "judged after the edge").to.deep.equal(expected);
    expect(countsAfter(duringOutage, straddling), "judged across the edge").to.deep.equal(expected);
  });

  it("pods set up once the agent had been Ready long enough count as broken, however they are judged", () => {
    const expected = { meshed: PODS, broken: PODS, explained: 0, lingering: 0 };
    expect(countsAfter(EDGE, after), "set up at the edge").to.deep.equal(expected);
    expect(
      countsAfter(
        EDGE + 5 * SECOND,
        after.map((atMs) => atMs + 10 * SECOND),
      ),
    ).to.deep.equal(expected);
  });
});
