// The pods waiting for an in-flight slot (held node_inflight or namespace_inflight) under random sequences: judging
// a queued pod, its DELETE's outcome (done, skipped, failed), a pod we deleted leaving the cache (its slot freed), a
// waiting pod healing or going away, the pace refilling. The work queue is modelled as controller/triggers.ts fills
// it: the keys the guards' events wake (safety/wakeups.ts) and each changed pod. After every step, every free slot
// has a pod woken for it while pods wait for one: as many of the waiting pods are queued as there are free slots (or
// all of them), so no pod waits for a slot that is free. Only that many are woken, not every waiting pod (each wake
// is a reconcile: waking all re-judged each waiting pod once per slot freed). The runs count the branches they
// exist for, and fail if one is never reached.
import { expect } from "chai";
import fc from "fast-check";
import { detect, NO_CONTEXT } from "../../../src/detect/detect.js";
import { type PodFacts, podKey } from "../../../src/detect/facts.js";
import type { ActionOutcome, Ticket } from "../../../src/safety/ticket.js";
import { exited, init, istioPod } from "../../support/pod-builders.js";
import { deleteModeSafety, expectWaitersWoken, ISTIO_RULES, wokenQueue } from "../../support/safety-under-test.js";
import { FakeClock } from "../fake-clock.js";

const PER_NODE = 2;
const PER_NAMESPACE = 3;
const NODES = ["node-1", "node-2"] as const;
const NAMESPACES = ["shop", "cart"] as const;
const PODS = 10;
/** A slow pace now and then: a woken pod may then be held rate_limit instead, and stop waiting for a slot. */
const PER_MINUTE = 30;

type Step =
  | { readonly kind: "judge"; readonly which: number }
  | { readonly kind: "outcome"; readonly which: number; readonly result: ActionOutcome["result"] }
  | { readonly kind: "gone"; readonly which: number }
  | { readonly kind: "heal"; readonly which: number }
  | { readonly kind: "tick"; readonly ms: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("judge" as const), which: fc.nat() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("outcome" as const),
      which: fc.nat(),
      result: fc.constantFrom("success", "success", "skip", "fail") as fc.Arbitrary<ActionOutcome["result"]>,
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("gone" as const), which: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("heal" as const), which: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("tick" as const), ms: fc.integer({ min: 0, max: 5_000 }) }) },
);

type Reached = Map<string, number>;

function run(paced: boolean, steps: readonly Step[], reached: Reached): void {
  const reach = (branch: string) => reached.set(branch, (reached.get(branch) ?? 0) + 1);
  const clock = new FakeClock(Date.parse("2026-12-05T22:00:00Z"));
  const safety = deleteModeSafety({
    limits: {
      deletionsPerMinute: paced ? PER_MINUTE : 0,
      outageDeletionsPerMinute: paced ? PER_MINUTE : 0,
      deletionBurst: 3,
      inflightPerNode: PER_NODE,
      inflightPerNamespace: PER_NAMESPACE,
    },
    clock,
  });

  const cache = new Map<string, PodFacts>();
  /** DELETEs sent whose outcome is not known yet, and pods deleted and still terminating (their slot taken). */
  let sent: Ticket[] = [];
  const terminating: PodFacts[] = [];
  let judging = false;
  let serial = 0;

  const queued = wokenQueue(safety, (event, keys) => {
    if (event.kind !== "slot_freed") return;
    expect(keys.length, "no more woken than the free slots").to.be.at.most(event.free.node + event.free.namespace);
    if (keys.length === 0) return;
    reach(judging ? "wake: a pod that stopped waiting woke the next" : "wake: a freed slot woke a waiting pod");
  });
  const change = (key: string, current: PodFacts | undefined) => {
    const previous = cache.get(key);
    if (current) cache.set(key, current);
    else cache.delete(key);
    if (current) queued.add(key);
    safety.observe({ key, previous, current });
  };
  const brokenPod = () => {
    const n = serial++;
    return istioPod([init("istio-validation", "waiting", exited(126))], {
      name: `app-${n}`,
      namespace: NAMESPACES[n % NAMESPACES.length] as string,
      nodeName: NODES[Math.floor(n / 2) % NODES.length] as string,
      uid: `uid-${n}`,
      createdAtMs: clock.now(),
    });
  };
  const add = () => {
    const facts = brokenPod();
    change(podKey(facts.namespace, facts.name), facts);
  };
  for (let i = 0; i < PODS; i++) add();

  for (const each of steps) {
    switch (each.kind) {
      case "judge": {
        // A key whose DELETE is still out stays queued: the work queue runs it again once that reconcile ends.
        const keys = [...queued].filter((key) => !sent.some((ticket) => ticket.key === key));
        const key = keys[each.which % Math.max(1, keys.length)];
        if (key === undefined) break;
        queued.delete(key);
        const facts = cache.get(key);
        if (!facts) break;
        const waited = safety.holds.keys(["node_inflight", "namespace_inflight"]).includes(key);
        judging = true;
        const { decision, ticket } = safety.judge(facts, detect(facts, ISTIO_RULES, NO_CONTEXT));
        judging = false;
        const what = decision.kind === "hold" ? decision.reason : decision.kind;
        reach(`judge: ${what}`);
        if (waited && decision.kind === "hold" && decision.reason === "rate_limit") {
          reach("judge: a waiting pod now held rate_limit");
        }
        if (decision.kind === "act") sent.push(ticket);
        else ticket.release();
        break;
      }
      case "outcome": {
        const ticket = sent[each.which % Math.max(1, sent.length)];
        if (ticket === undefined) break;
        sent = sent.filter((other) => other !== ticket);
        ticket.settle({ result: each.result, ...(each.result === "throttled" && { retryAfterMs: 1_000 }) });
        reach(`outcome: ${each.result}`);
        if (each.result === "success") terminating.push(ticket.facts);
        break;
      }
      case "gone": {
        // A pod we deleted has terminated; its owner recreates it, broken again (the outage is not over for it).
        const facts = terminating.splice(each.which % Math.max(1, terminating.length), 1)[0];
        if (facts === undefined) break;
        change(podKey(facts.namespace, facts.name), undefined);
        add();
        break;
      }
      case "heal": {
        // A waiting pod heals by itself, or goes away (scaled down).
        const waiting = safety.holds.keys(["node_inflight", "namespace_inflight"]);
        const key = waiting[each.which % Math.max(1, waiting.length)];
        const facts = key === undefined ? undefined : cache.get(key);
        if (key === undefined || facts === undefined) break;
        reach("a waiting pod healed or went away");
        if (each.which % 2 === 0) change(key, { ...facts, initContainers: [init("istio-validation", exited(0))] });
        else change(key, undefined);
        break;
      }
      case "tick":
        clock.advance(each.ms);
        break;
    }
    const slots = safety.snapshot().guards.inflight;
    const lines = [
      ...NODES.map((node) => ({
        reason: "node_inflight" as const,
        where: { node },
        free: PER_NODE - slots.filter(([, slot]) => slot.node === node).length,
      })),
      ...NAMESPACES.map((namespace) => ({
        reason: "namespace_inflight" as const,
        where: { namespace },
        free: PER_NAMESPACE - slots.filter(([, slot]) => slot.namespace === namespace).length,
      })),
    ];
    for (const line of expectWaitersWoken(safety, queued, lines)) {
      if (safety.holds.keys([line.reason], line.where).length > line.free) reach("more pods waiting than free slots");
    }
  }
}

const BRANCHES = [
  "judge: act",
  "judge: node_inflight",
  "judge: namespace_inflight",
  "judge: rate_limit",
  "judge: a waiting pod now held rate_limit",
  "outcome: success",
  "outcome: skip",
  "outcome: fail",
  "a waiting pod healed or went away",
  "wake: a freed slot woke a waiting pod",
  "wake: a pod that stopped waiting woke the next",
  "more pods waiting than free slots",
];

describe("safety: pods waiting for an in-flight slot (property)", () => {
  it("wakes as many of them as there are free slots, so none waits for a slot that is free", () => {
    const reached: Reached = new Map();
    fc.assert(
      fc.property(fc.boolean(), fc.array(step, { minLength: 20, maxLength: 150, size: "max" }), (paced, steps) =>
        run(paced, steps, reached),
      ),
      { numRuns: 150, seed: 20261205 },
    );
    const missed = BRANCHES.filter((branch) => !reached.has(branch));
    expect(missed, `branches never reached (reached: ${JSON.stringify(Object.fromEntries(reached))})`).to.deep.equal(
      [],
    );
  });
});
