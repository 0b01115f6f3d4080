// The safety object under random sequences of its two calls (judge, then settle or release) interleaved with cache
// changes (new pods, replacements with a new UID under the same key, deletes, healing) and time passing (the pace
// refilling, the storm window expiring). After every step: in-flight deletions within the caps, turns spent within
// the bucket, no ticket open once settled or released, and the holds exactly the pods last judged held.
import { expect } from "chai";
import fc from "fast-check";
import { Registry } from "prom-client";
import { detect, NO_CONTEXT } from "../../../src/detect/detect.js";
import { type PodFacts, podKey } from "../../../src/detect/facts.js";
import { presetRule } from "../../../src/detect/presets.js";
import type { Rule } from "../../../src/detect/rule.js";
import { createMetrics } from "../../../src/observe/metrics.js";
import { HOLD_REASONS, type HoldReason } from "../../../src/safety/hold-reasons.js";
import { Safety } from "../../../src/safety/safety.js";
import type { ActionOutcome, Ticket } from "../../../src/safety/ticket.js";
import { exited, init, istioPod } from "../../support/pod-builders.js";
import { guardsOff, TEST_LABEL } from "../../support/test-reconciler.js";
import { FakeClock } from "../fake-clock.js";

const RULES = [presetRule("istio") as Rule];
const PER_MINUTE = 6;
const BURST = 2;
const PER_NODE = 1;
const PER_NAMESPACE = 2;
const NAMES = ["a", "b", "c", "d"] as const;
const NODES = ["node-1", "node-2"] as const;

type Step =
  | { readonly kind: "judge"; readonly pod: number }
  | { readonly kind: "settle"; readonly which: number; readonly result: ActionOutcome["result"] }
  | { readonly kind: "release"; readonly which: number }
  | { readonly kind: "create"; readonly pod: number; readonly node: number; readonly broken: boolean }
  | { readonly kind: "delete"; readonly pod: number }
  | { readonly kind: "tick"; readonly ms: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("judge" as const), pod: fc.nat(NAMES.length - 1) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("settle" as const),
      which: fc.nat(),
      result: fc.constantFrom("success", "skip", "fail", "throttled") as fc.Arbitrary<ActionOutcome["result"]>,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("release" as const), which: fc.nat() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("create" as const),
      pod: fc.nat(NAMES.length - 1),
      node: fc.nat(NODES.length - 1),
      broken: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("delete" as const), pod: fc.nat(NAMES.length - 1) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("tick" as const), ms: fc.integer({ min: 0, max: 15_000 }) }) },
);

function run(steps: readonly Step[]): void {
  const clock = new FakeClock(Date.parse("2026-12-04T10:00:00Z"));
  const start = clock.now();
  const safety = new Safety({
    ...guardsOff({
      limits: {
        deletionsPerMinute: PER_MINUTE,
        outageDeletionsPerMinute: PER_MINUTE,
        deletionBurst: BURST,
        inflightPerNode: PER_NODE,
        inflightPerNamespace: PER_NAMESPACE,
      },
      loopBackoff: { baseMs: 1_000, maxMs: 4_000 },
      storm: { maxBrokenFraction: 0.9, minBroken: 4, windowMs: 10_000 },
      clock,
    }),
    rules: RULES,
    mode: "delete",
    label: TEST_LABEL,
    deleteBarePods: false,
    metrics: createMetrics(new Registry(), { ruleNames: ["istio"], version: "test" }),
    context: () => ({ ...NO_CONTEXT, nowMs: clock.now() }),
  });

  // The model: the cache, the open tickets, the deletes in flight (by UID), the turns spent, who is held.
  const cache = new Map<string, PodFacts>();
  let open: Ticket[] = [];
  const inflight = new Map<string, { node: string; namespace: string }>();
  let spent = 0;
  const held = new Map<string, HoldReason>();
  let serial = 0;

  const change = (key: string, current: PodFacts | undefined) => {
    const previous = cache.get(key);
    if (current) cache.set(key, current);
    else cache.delete(key);
    safety.observe({ key, previous, current });
    if (previous && previous.uid !== current?.uid) inflight.delete(previous.uid);
    if (!current) held.delete(key);
  };
  const inflightOn = (where: (slot: { node: string; namespace: string }) => boolean) =>
    [...inflight.values()].filter(where).length;

  for (const each of steps) {
    switch (each.kind) {
      case "create": {
        const name = NAMES[each.pod] as string;
        const node = NODES[each.node] as string;
        const inits = [
          each.broken ? init("istio-validation", "waiting", exited(126)) : init("istio-validation", exited(0)),
        ];
        const facts = istioPod(inits, { name, nodeName: node, uid: `uid-${++serial}`, createdAtMs: clock.now() });
        change(podKey(facts.namespace, name), facts);
        break;
      }
      case "delete": {
        const facts = [...cache.values()].find((pod) => pod.name === NAMES[each.pod]);
        if (facts) change(podKey(facts.namespace, facts.name), undefined);
        break;
      }
      case "tick":
        clock.advance(each.ms);
        break;
      case "judge": {
        const facts = [...cache.values()].find((pod) => pod.name === NAMES[each.pod]);
        // One reconcile per key at a time, as the work queue guarantees.
        if (!facts || open.some((ticket) => ticket.facts.name === facts.name)) break;
        const key = podKey(facts.namespace, facts.name);
        const { decision, ticket } = safety.judge(facts, detect(facts, RULES, NO_CONTEXT));
        open.push(ticket);
        if (decision.kind === "hold") held.set(key, decision.reason);
        else held.delete(key);
        if (decision.kind === "act" && decision.action === "delete") {
          spent++;
          inflight.set(facts.uid, { node: facts.nodeName ?? "", namespace: facts.namespace });
        }
        break;
      }
      case "settle":
      case "release": {
        if (open.length === 0) break;
        const ticket = open[each.which % open.length] as Ticket;
        const acting = ticket.decision.kind === "act" && ticket.decision.action === "delete";
        if (each.kind === "settle" && ticket.decision.kind === "act") {
          ticket.settle({ result: each.result, ...(each.result === "throttled" && { retryAfterMs: 2_000 }) });
          // A DELETE that did not happen frees its slot; a skipped or refused one also gives its turn back (a failed
          // one may have reached the server: its turn stays spent).
          if (acting && each.result !== "success") inflight.delete(ticket.facts.uid);
          if (acting && (each.result === "skip" || each.result === "throttled")) spent--;
          if (each.result === "throttled") held.set(ticket.key, "throttled");
        } else {
          ticket.release();
          if (acting) {
            spent--;
            inflight.delete(ticket.facts.uid);
          }
        }
        open = open.filter((other) => other !== ticket);
        expect(() => ticket.release(), "a closed ticket closes once").to.throw();
        break;
      }
    }
    // In flight within the caps.
    for (const node of NODES) expect(inflightOn((slot) => slot.node === node)).to.be.at.most(PER_NODE);
    expect(inflightOn((slot) => slot.namespace === "shop")).to.be.at.most(PER_NAMESPACE);
    // Turns spent within the bucket: the burst, plus what the rate has refilled since the start.
    expect(spent).to.be.at.most(BURST + Math.floor(((clock.now() - start) * PER_MINUTE) / 60_000));
    // Every ticket settled or released is closed; only the open ones are.
    expect(safety.openTickets).to.equal(open.length);
    // The holds are the pods last judged held (or throttled by the server), not released since.
    const holds = new Map(
      HOLD_REASONS.flatMap((reason) => safety.holds.keys([reason]).map((key) => [key, reason] as const)),
    );
    expect(holds).to.deep.equal(held);
  }
}

describe("safety/Safety: judge, settle and release under cache changes and time (property)", () => {
  it("keeps in-flight, pace, tickets and holds consistent", () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 10, maxLength: 120, size: "max" }), (steps) => run(steps)),
      { numRuns: 100 },
    );
  });
});
