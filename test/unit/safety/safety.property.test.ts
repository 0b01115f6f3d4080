// The safety object under random sequences of its two calls (judge, then settle or release) interleaved with cache
// changes (new pods, replacements with a new UID under the same key, deletes, a pod breaking or healing in place),
// time passing (the pace refilling, the storm window expiring) and dry judgements (a scan's pass, an explain of every
// mode). After every step: in-flight deletions within the caps, turns spent within the bucket, no ticket open once
// settled or released, the holds exactly the pods last judged held, and the storm breaker's counts equal to a recount
// from the cache plus our own deletes (the window, and the 10 min wait for an unreplaced pod's replacement: some ticks
// land in its last minute or just past it, so a breaker that lets such a slot go early or late fails the recount). A
// dry judgement changes no state at all (a snapshot before and after). The work queue is modelled too (the keys
// the guards' events wake, as controller/triggers.ts maps them, and each changed broken pod's): whenever a node or
// the namespace has a free in-flight slot, the pods held waiting for one there are woken, as many as fit, so none
// waits for a slot that is free. The runs count the branches they exist for, and fail if one is never reached.
import { expect } from "chai";
import fc from "fast-check";
import type { Mode } from "../../../src/config/config.js";
import { detect, NO_CONTEXT } from "../../../src/detect/detect.js";
import { type PodFacts, podKey } from "../../../src/detect/facts.js";
import { HOLD_REASONS, type HoldReason } from "../../../src/safety/hold-reasons.js";
import type { StormCounts } from "../../../src/safety/storm-breaker.js";
import type { ActionOutcome, Ticket } from "../../../src/safety/ticket.js";
import { exited, init, istioPod } from "../../support/pod-builders.js";
import { deleteModeSafety, expectWaitersWoken, ISTIO_RULES, wokenQueue } from "../../support/safety-under-test.js";
import { FakeClock } from "../fake-clock.js";

const PER_MINUTE = 4;
const BURST = 1;
const PER_NODE = 1;
const PER_NAMESPACE = 2;
const NAMES = ["a", "b", "c", "d"] as const;
const NODES = ["node-1", "node-2"] as const;
const WINDOW_MS = 10_000;
/** The breaker's wait for the replacement of a deleted pod whose owner never recreates it (storm-breaker.ts). */
const REPLACEMENT_WAIT_MS = 10 * 60_000;
const MODES: readonly Mode[] = ["delete", "report", "label"];

type Step =
  | { readonly kind: "judge"; readonly pod: number }
  | { readonly kind: "settle"; readonly which: number; readonly result: ActionOutcome["result"] }
  | { readonly kind: "release"; readonly which: number }
  | { readonly kind: "create"; readonly pod: number; readonly node: number; readonly broken: boolean }
  | { readonly kind: "delete"; readonly pod: number }
  | { readonly kind: "flip"; readonly pod: number }
  | { readonly kind: "dry"; readonly what: "scan" | "explain"; readonly pod: number }
  | { readonly kind: "tick"; readonly ms: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("judge" as const), pod: fc.nat(NAMES.length - 1) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("settle" as const),
      which: fc.nat(),
      result: fc.oneof(
        { weight: 3, arbitrary: fc.constant("success" as const) },
        { weight: 2, arbitrary: fc.constant("throttled" as const) },
        { weight: 1, arbitrary: fc.constantFrom("skip", "fail") as fc.Arbitrary<ActionOutcome["result"]> },
      ),
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
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("delete" as const), pod: fc.nat(NAMES.length - 1) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("flip" as const), pod: fc.nat(NAMES.length - 1) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("dry" as const),
      what: fc.constantFrom("scan", "explain") as fc.Arbitrary<"scan" | "explain">,
      pod: fc.nat(NAMES.length - 1),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("tick" as const),
      // Now and then long enough for an unreplaced slot's wait to pass, or to come just short of it or just past it:
      // the recount then tells a breaker that lets the slot go early (or late) from one that keeps the wait.
      ms: fc.oneof(
        { weight: 4, arbitrary: fc.integer({ min: 0, max: 15_000 }) },
        { weight: 1, arbitrary: fc.integer({ min: 0, max: 2 * REPLACEMENT_WAIT_MS }) },
        { weight: 1, arbitrary: fc.integer({ min: REPLACEMENT_WAIT_MS - 60_000, max: REPLACEMENT_WAIT_MS + 60_000 }) },
      ),
    }),
  },
);

/** A loose breaker (opens often) and a strict one (rarely): the counts must hold either way. */
const stormConfig = fc.constantFrom({ maxBrokenFraction: 0.9, minBroken: 4 }, { maxBrokenFraction: 0.5, minBroken: 2 });

/** How often each branch the property exists for was reached, over all runs. */
type Reached = Map<string, number>;

/** One of our deletes as the recount sees it: from the judge that decided it to its slot's expiry. */
type OurDelete = {
  readonly node: string;
  readonly deletedAtWallMs: number;
  readonly deletedAtMonoMs: number;
  /** The DELETE's outcome is not known yet. */
  pending: boolean;
  /** The first pod of the owner created after the delete; uid "" once that pod left. */
  replacement: { readonly uid: string } | undefined;
};

function run(storm: { maxBrokenFraction: number; minBroken: number }, steps: readonly Step[], reached: Reached): void {
  const reach = (branch: string) => reached.set(branch, (reached.get(branch) ?? 0) + 1);
  const clock = new FakeClock(Date.parse("2026-12-04T10:00:00Z"));
  const start = clock.now();
  const safety = deleteModeSafety({
    limits: {
      deletionsPerMinute: PER_MINUTE,
      outageDeletionsPerMinute: PER_MINUTE,
      deletionBurst: BURST,
      inflightPerNode: PER_NODE,
      inflightPerNamespace: PER_NAMESPACE,
    },
    loopBackoff: { baseMs: 5_000, maxMs: 20_000 },
    storm: { ...storm, windowMs: WINDOW_MS },
    clock,
  });

  // The model: the cache, the open tickets, the deletes in flight (by UID), the turns spent, who is held.
  const cache = new Map<string, PodFacts>();
  /** The work queue: keys to be judged again. */
  const queued = wokenQueue(safety, (event, keys) => {
    if (event.kind === "slot_freed" && keys.length > 0) reach("wake: a slot freed woke a pod waiting for one");
  });
  let open: Ticket[] = [];
  const inflight = new Map<string, { node: string; namespace: string }>();
  let spent = 0;
  const held = new Map<string, HoldReason>();
  let serial = 0;
  /** Our deletes whose slot the breaker still keeps, by the deleted pod's UID, in the order of the deletes. */
  const ours = new Map<string, OurDelete>();

  const isBroken = (facts: PodFacts) => detect(facts, ISTIO_RULES, NO_CONTEXT).broken;
  const brokenInCache = (uid: string) => [...cache.values()].some((pod) => pod.uid === uid && isBroken(pod));
  /** A deleted pod's slot counts while the pod itself no longer counts as alive and broken. */
  const counting = (uid: string) => !brokenInCache(uid);
  const slotHolder = (uid: string) => [...ours.values()].some((mine) => mine.replacement?.uid === uid);

  const change = (key: string, current: PodFacts | undefined) => {
    const previous = cache.get(key);
    if (previous) cache.delete(key);
    if (previous && previous.uid !== current?.uid) {
      // A replacement that leaves gives its slot up for good: the slot waits for the window alone.
      for (const mine of ours.values()) if (mine.replacement?.uid === previous.uid) mine.replacement = { uid: "" };
    }
    if (current && previous?.uid !== current.uid) claimSlot(current);
    else if (current && isBroken(current) && slotHolder(current.uid)) {
      // A replacement holding a slot broke in place: it counts as itself, the slot goes.
      for (const [uid, mine] of ours) if (mine.replacement?.uid === current.uid) ours.delete(uid);
      reach("storm: a healthy replacement broke in place");
    }
    if (current) cache.set(key, current);
    // The pod trigger: a pod broken now, or broken before (it may have healed).
    if (current && (isBroken(current) || (previous !== undefined && isBroken(previous)))) queued.add(key);
    safety.observe({ key, previous, current });
    if (previous && previous.uid !== current?.uid) inflight.delete(previous.uid);
    if (!current) held.delete(key);
  };
  /** A new pod of the owner, created no earlier than the second of one of our deletes, takes the first free slot. */
  const claimSlot = (facts: PodFacts) => {
    for (const [uid, mine] of ours) {
      if (mine.replacement !== undefined || !counting(uid)) continue;
      if ((facts.createdAtMs ?? 0) < Math.floor(mine.deletedAtWallMs / 1000) * 1000) continue;
      if (isBroken(facts)) {
        ours.delete(uid);
        reach("storm: a replacement came back broken");
      } else {
        mine.replacement = { uid: facts.uid };
        reach("storm: a healthy replacement took the slot");
      }
      return;
    }
  };
  /** The DELETE's outcome: one that happened (or may have) keeps the slot, one that did not gives it back. */
  const deleted = (uid: string, happened: boolean) => {
    const mine = ours.get(uid);
    if (!mine) return;
    if (happened) mine.pending = false;
    else {
      ours.delete(uid);
      reach("storm: a delete that did not happen gave its slot back");
    }
  };
  const expire = () => {
    for (const [uid, mine] of ours) {
      const waitMs = mine.replacement === undefined ? Math.max(WINDOW_MS, REPLACEMENT_WAIT_MS) : WINDOW_MS;
      if (!mine.pending && clock.monotonic() >= mine.deletedAtMonoMs + waitMs) {
        // Still counted up to now: the recount after this step tells a breaker that keeps it longer.
        const unreplaced = mine.replacement === undefined;
        if (unreplaced && counting(uid)) reach("storm: an unreplaced slot counted until it expired");
        ours.delete(uid);
        reach(mine.replacement === undefined ? "storm: an unreplaced slot expired" : "storm: a slot expired");
      }
    }
  };
  /** The counts recounted from scratch: alive meshed pods (a slot's healthy replacement aside) plus counting slots. */
  const recount = (node: string | undefined): StormCounts => {
    const on = (where: string) => node === undefined || where === node;
    const alive = [...cache.values()].filter((pod) => on(pod.nodeName ?? "") && !slotHolder(pod.uid));
    const slots = [...ours].filter(([uid, mine]) => on(mine.node) && counting(uid));
    const broken = alive.filter(isBroken).length + slots.length;
    return { meshed: alive.length + slots.length, broken, explained: 0, lingering: slots.length };
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
      case "flip": {
        const facts = [...cache.values()].find((pod) => pod.name === NAMES[each.pod]);
        if (!facts) break;
        // The same pod (same UID) breaking or healing in place: its validator's status changed.
        const inits = [
          isBroken(facts) ? init("istio-validation", exited(0)) : init("istio-validation", "waiting", exited(126)),
        ];
        change(podKey(facts.namespace, facts.name), { ...facts, initContainers: inits });
        break;
      }
      case "tick":
        clock.advance(each.ms);
        expire();
        break;
      case "dry": {
        // A scan's pass over every pod, or an explain of one pod in every mode: nothing but the dry paces may move.
        const before = safety.snapshot();
        const pods = [...cache.values()].filter((pod) => each.what === "scan" || pod.name === NAMES[each.pod]);
        const scan = safety.dryRun();
        for (const facts of pods) {
          for (const mode of each.what === "scan" ? [undefined] : MODES) {
            const dry = each.what === "scan" ? scan : safety.dryRun();
            const { decision, ticket } = safety.judge(facts, detect(facts, ISTIO_RULES, NO_CONTEXT), {
              dry,
              ...(mode && { mode }),
            });
            reach(`dry ${each.what}: ${decision.kind === "hold" ? decision.reason : decision.kind}`);
            if (decision.kind === "act") ticket.settle({ result: "success" });
            else ticket.release();
          }
        }
        expect(safety.snapshot(), `a dry ${each.what} changes no state`).to.deep.equal(before);
        break;
      }
      case "judge": {
        const facts = [...cache.values()].find((pod) => pod.name === NAMES[each.pod]);
        // One reconcile per key at a time, as the work queue guarantees.
        if (!facts || open.some((ticket) => ticket.facts.name === facts.name)) break;
        const key = podKey(facts.namespace, facts.name);
        queued.delete(key);
        const { decision, ticket } = safety.judge(facts, detect(facts, ISTIO_RULES, NO_CONTEXT));
        open.push(ticket);
        if (decision.kind === "hold") held.set(key, decision.reason);
        else held.delete(key);
        reach(`judge: ${decision.kind === "hold" ? decision.reason : decision.kind}`);
        if (decision.kind === "act" && decision.action === "delete") {
          spent++;
          inflight.set(facts.uid, { node: facts.nodeName ?? "", namespace: facts.namespace });
          if (!ours.has(facts.uid)) {
            const deletedAt = { wall: clock.now(), mono: clock.monotonic() };
            const mine = { deletedAtWallMs: deletedAt.wall, deletedAtMonoMs: deletedAt.mono };
            ours.set(facts.uid, { ...mine, node: facts.nodeName ?? "", pending: true, replacement: undefined });
          }
        }
        break;
      }
      case "settle":
      case "release": {
        if (open.length === 0) break;
        const ticket = open[each.which % open.length] as Ticket;
        const acting = ticket.decision.kind === "act" && ticket.decision.action === "delete";
        if (each.kind === "settle" && ticket.decision.kind === "act") {
          ticket.settle({ result: each.result, ...(each.result === "throttled" && { retryAfterMs: 20_000 }) });
          // A DELETE that did not happen frees its slot; a skipped or refused one also gives its turn back (a failed
          // one may have reached the server: its turn stays spent).
          if (acting && each.result !== "success") inflight.delete(ticket.facts.uid);
          if (acting && (each.result === "skip" || each.result === "throttled")) spent--;
          if (acting) deleted(ticket.facts.uid, each.result === "success" || each.result === "fail");
          if (each.result === "throttled") held.set(ticket.key, "throttled");
        } else {
          ticket.release();
          if (acting) {
            spent--;
            inflight.delete(ticket.facts.uid);
            deleted(ticket.facts.uid, false);
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
    // No pod waits for a slot that is free: as many of the pods waiting for one as fit are on the queue.
    const lines = [
      ...NODES.map((node) => ({
        reason: "node_inflight" as const,
        where: { node },
        free: PER_NODE - inflightOn((slot) => slot.node === node),
      })),
      {
        reason: "namespace_inflight" as const,
        where: { namespace: "shop" },
        free: PER_NAMESPACE - inflightOn((slot) => slot.namespace === "shop"),
      },
    ];
    if (expectWaitersWoken(safety, queued, lines).length > 0) reach("wake: a slot free while pods wait for one");
    // Turns spent within the bucket: the burst, plus what the rate has refilled since the start.
    expect(spent).to.be.at.most(BURST + Math.floor(((clock.now() - start) * PER_MINUTE) / 60_000));
    // Every ticket settled or released is closed; only the open ones are.
    expect(safety.openTickets).to.equal(open.length);
    // The holds are the pods last judged held (or throttled by the server), not released since.
    const holds = new Map(
      HOLD_REASONS.flatMap((reason) => safety.holds.keys([reason]).map((key) => [key, reason] as const)),
    );
    expect(holds).to.deep.equal(held);
    // The storm breaker's counts: the cache plus our own deletes, recounted from scratch.
    expect(safety.storm.counts("cluster", ""), "the cluster's storm counts").to.deep.equal(recount(undefined));
    for (const node of NODES) {
      expect(safety.storm.counts("node", node), `the storm counts on ${node}`).to.deep.equal(recount(node));
    }
    if (recount(undefined).lingering > 0) reach("storm: our deletes counted as broken");
    const unreplaced = [...ours].filter(([uid, mine]) => !mine.pending && !mine.replacement && counting(uid));
    const ageMs = (mine: OurDelete) => clock.monotonic() - mine.deletedAtMonoMs;
    if (unreplaced.some(([, mine]) => ageMs(mine) > WINDOW_MS)) {
      reach("storm: an unreplaced slot still counted past the window");
    }
    // The replacement wait itself: a slot still counted in its last minute (a shorter wait would have let it go).
    if (unreplaced.some(([, mine]) => ageMs(mine) >= REPLACEMENT_WAIT_MS - 60_000)) {
      reach("storm: an unreplaced slot still counted in the last minute of its replacement wait");
    }
  }
}

const SEED = 20261205;

/** Every branch the property exists for, reached in at least one run (or the generator has drifted). */
const BRANCHES = [
  "judge: act",
  "judge: rate_limit",
  "judge: storm",
  "judge: loop_backoff",
  "judge: node_inflight",
  "judge: throttled",
  "judge: skip",
  "judge: healthy",
  "storm: our deletes counted as broken",
  "storm: a healthy replacement took the slot",
  "storm: a replacement came back broken",
  "storm: a healthy replacement broke in place",
  "storm: a delete that did not happen gave its slot back",
  "storm: a slot expired",
  "storm: an unreplaced slot expired",
  "storm: an unreplaced slot still counted past the window",
  "storm: an unreplaced slot still counted in the last minute of its replacement wait",
  "storm: an unreplaced slot counted until it expired",
  "dry scan: act",
  "dry scan: rate_limit",
  "dry scan: storm",
  "dry scan: loop_backoff",
  "dry scan: healthy",
  "dry explain: act",
  "wake: a slot freed woke a pod waiting for one",
  "wake: a slot free while pods wait for one",
];

describe("safety/Safety: judge, settle and release under cache changes and time (property)", () => {
  it("keeps in-flight, pace, tickets, holds and the storm counts consistent; a dry judge changes nothing", () => {
    const reached: Reached = new Map();
    fc.assert(
      fc.property(stormConfig, fc.array(step, { minLength: 10, maxLength: 120, size: "max" }), (storm, steps) =>
        run(storm, steps, reached),
      ),
      // A fixed seed: which branches 100 runs reach must not change from one run to the next (a random one left
      // the rarest, an unreplaced slot expiring, unreached about one run in ten).
      { numRuns: 100, seed: SEED },
    );
    const missed = BRANCHES.filter((branch) => !reached.has(branch));
    expect(missed, `branches never reached (reached: ${JSON.stringify(Object.fromEntries(reached))})`).to.deep.equal(
      [],
    );
  });
});
