// The storm breaker: when a large share of a node's (or the cluster's) meshed pods break without an explanation,
// the cause is systemic (a bad validator rollout, a broken CNI) and deleting would only restart everything; hold
// until the share falls. Three things keep it honest:
// - A pod we deleted keeps counting as broken (a "lingering" slot) until its replacement has been judged and the
//   window has passed, so our own deletes never pull the share down, and a wave spread over the window is one
//   wave. Its replacement (same owner, created after the delete) takes the slot instead of adding a new one.
// - Breakage explained by a CNI agent outage (the caller says so when the pod first breaks) counts as meshed but
//   not as broken: the agent gate holds those pods, and once the agent is back they are repaired under the
//   in-flight caps, not the cluster-wide pace (SafetyGuards.view).
// - The caller asks before every delete, and the counts change synchronously with the cache.
import type { PodFacts } from "../detect/facts.js";
import { type Clock, type Instant, instantOf, systemClock } from "../util/clock.js";

/**
 * How one pod counts: meshed (carries a rule's marker, alive) and, of those, broken now. `explained` is read
 * only when the pod turns broken: its breakage is due to its node's CNI agent being down (or just back).
 */
export type PodStanding = { readonly meshed: boolean; readonly broken: boolean; readonly explained?: boolean };

type Counts = { meshed: number; broken: number; explained: number; lingering: number };

/** One scope's counts: broken excludes explained breakage; lingering (our deletes still counted) is part of broken. */
export type StormCounts = Readonly<Counts>;

/** The breaker's whole state as plain data, read-only (tests compare it before and after a dry judgement). */
export type StormSnapshot = {
  readonly cluster: StormCounts;
  readonly byNode: readonly (readonly [string, StormCounts])[];
  readonly brokenPods: readonly (readonly [string, { readonly explained: boolean }])[];
  readonly lingering: readonly (readonly [string, Readonly<Lingering>])[];
  readonly replacements: readonly (readonly [string, string])[];
};

export type StormScope = "node" | "cluster";

/** A breaker that opened or closed with the last update: "" is the cluster, otherwise a node name. */
export type StormTransition = { readonly scope: StormScope; readonly node: string; readonly open: boolean };

/** A pod we deleted: it keeps its slot until its replacement was judged and the window has passed. */
type Lingering = {
  readonly node: string;
  readonly ownerUid: string | undefined;
  /**
   * The wall time is compared with a replacement's creationTimestamp (the API server's clock); the slot's window is
   * measured on the monotonic clock, so a wall clock set forward cannot drop every slot at once.
   */
  readonly deletedAt: Instant;
  readonly explained: boolean;
  /** Counted in its node's slots: only once the pod itself no longer counts as alive and broken. */
  counting: boolean;
  /** Set once a replacement took the slot; the replacement is not counted on its own meanwhile. */
  replacement: { readonly uid: string; readonly node: string } | undefined;
  /** Not deleted yet: the DELETE is on its way. */
  pending: boolean;
};

/** A deleted pod whose owner never recreates it (scaled down) stops counting after this at the latest. */
const REPLACEMENT_WAIT_MS = 10 * 60_000;

export type StormOptions = {
  readonly maxBrokenFraction: number;
  readonly minBroken: number;
  /** How long a pod we deleted keeps counting as broken after its delete (see above). */
  readonly windowMs?: number;
  readonly clock?: Clock;
};

/** What readers (the storm report, scan and explain, tests) may ask of the breaker: its shares and counts, read-only. */
export type StormView = Pick<StormBreaker, "describe" | "counts">;

export class StormBreaker {
  readonly #maxFraction: number;
  readonly #minBroken: number;
  readonly #windowMs: number;
  readonly #clock: Clock;
  readonly #byNode = new Map<string, Counts>();
  readonly #cluster: Counts = { meshed: 0, broken: 0, explained: 0, lingering: 0 };
  /** Alive meshed pods counted as broken, by UID: whether their breakage is explained. */
  readonly #brokenPods = new Map<string, { readonly explained: boolean }>();
  /** Pods we deleted (or are deleting), by UID. */
  readonly #lingering = new Map<string, Lingering>();
  /** Replacement pod UID → the deleted pod UID whose slot it holds. */
  readonly #replacements = new Map<string, string>();
  /** Open state of every scope touched by the current operation, before it. */
  #before = new Map<string, boolean>();

  constructor(options: StormOptions) {
    this.#maxFraction = options.maxBrokenFraction;
    this.#minBroken = options.minBroken;
    this.#windowMs = options.windowMs ?? 0;
    this.#clock = options.clock ?? systemClock;
  }

  /** Moves one pod from its old standing to its new one; returns the breakers this opened or closed. */
  update(
    previous: { facts: PodFacts; standing: PodStanding } | undefined,
    current: { facts: PodFacts; standing: PodStanding } | undefined,
  ): StormTransition[] {
    return this.#operation(() => {
      const prev = previous?.standing.meshed ? previous : undefined;
      const cur = current?.standing.meshed ? current : undefined;
      // The same pod keeps the explanation it had when it broke; a new pod under the key is judged afresh.
      const samePod = prev !== undefined && prev.facts.uid === cur?.facts.uid;
      const explainedBefore = samePod ? this.#brokenPods.get(prev.facts.uid)?.explained : undefined;
      if (prev) this.#removeAlive(prev.facts);
      if (previous && previous.facts.uid !== current?.facts.uid) this.#left(previous.facts.uid);
      // Only a pod seen for the first time can be a replacement: a sibling that was already there never is.
      const firstSight = previous === undefined || previous.facts.uid !== cur?.facts.uid;
      if (cur) this.#addAlive(cur.facts, cur.standing, explainedBefore, firstSight);
      else if (current) this.#left(current.facts.uid);
    });
  }

  /** Call right before sending the DELETE: the pod keeps its slot, as broken, from now on. */
  deleting(facts: PodFacts): StormTransition[] {
    return this.#operation(() => {
      if (this.#lingering.has(facts.uid)) return;
      const node = facts.nodeName ?? "";
      this.#lingering.set(facts.uid, {
        node,
        ownerUid: facts.owner?.uid,
        deletedAt: instantOf(this.#clock),
        explained: this.#brokenPods.get(facts.uid)?.explained ?? false,
        counting: false,
        replacement: undefined,
        pending: true,
      });
      this.#settle(facts.uid);
    });
  }

  /** The DELETE's outcome: a delete that did not happen gives the slot back to the pod (if it is still there). */
  deleted(uid: string, happened: boolean): StormTransition[] {
    return this.#operation(() => {
      const entry = this.#lingering.get(uid);
      if (!entry) return;
      if (happened) {
        entry.pending = false;
        return;
      }
      this.#dropLingering(uid, entry);
    });
  }

  /** Lets slots of pods we deleted go once the window has passed (and their replacement was judged). */
  expire(): StormTransition[] {
    return this.#operation(() => {
      const now = this.#clock.monotonic();
      for (const [uid, entry] of this.#lingering) {
        if (!entry.pending && now >= this.#expiresAt(entry)) this.#dropLingering(uid, entry);
      }
    });
  }

  /**
   * When expire() next has a slot to let go, on the monotonic clock, if any (a DELETE still on its way has no time
   * yet).
   */
  nextExpiryAtMs(): number | undefined {
    let next: number | undefined;
    for (const entry of this.#lingering.values()) {
      if (!entry.pending) next = Math.min(next ?? Number.POSITIVE_INFINITY, this.#expiresAt(entry));
    }
    return next;
  }

  #expiresAt(entry: Lingering): number {
    const awaiting = entry.ownerUid !== undefined && entry.replacement === undefined;
    return entry.deletedAt.monoMs + (awaiting ? Math.max(this.#windowMs, REPLACEMENT_WAIT_MS) : this.#windowMs);
  }

  /** Whether this pod is counted as broken now, its breakage explained or not (its standing as last recorded). */
  isBroken(uid: string): boolean {
    return this.#brokenPods.has(uid);
  }

  /**
   * Whether this pod, counted as broken now, broke while its node's CNI agent was down or just back (judged once,
   * when it broke). False for a pod not counted as broken.
   */
  explained(uid: string): boolean {
    return this.#brokenPods.get(uid)?.explained === true;
  }

  /** The breaker that stops deleting this pod now, if any. */
  openFor(facts: PodFacts): StormScope | undefined {
    if (this.#isOpen(this.#byNode.get(facts.nodeName ?? ""))) return "node";
    if (this.#isOpen(this.#cluster)) return "cluster";
    return undefined;
  }

  /** The counts the breaker opens on, for one scope (a copy). */
  counts(scope: StormScope, node: string): StormCounts {
    return { ...((scope === "node" ? this.#byNode.get(node) : this.#cluster) ?? emptyCounts()) };
  }

  snapshot(): StormSnapshot {
    return {
      cluster: this.counts("cluster", ""),
      byNode: [...this.#byNode].map(([node, counts]) => [node, { ...counts }]),
      brokenPods: [...this.#brokenPods].map(([uid, pod]) => [uid, { ...pod }]),
      lingering: [...this.#lingering].map(([uid, entry]) => [uid, { ...entry }]),
      replacements: [...this.#replacements],
    };
  }

  /** "3 of 4 meshed pods broken on node n1 (more than 50%)", for Events and logs. */
  describe(scope: StormScope, node: string): string {
    const counts = scope === "node" ? (this.#byNode.get(node) ?? emptyCounts()) : this.#cluster;
    const where = scope === "node" ? `on node ${node}` : "in the cluster";
    const notes = [
      counts.lingering > 0 ? `${counts.lingering} of them deleted by us, still counted` : "",
      counts.explained > 0 ? `${counts.explained} more broken by a CNI agent outage, not counted` : "",
    ].filter((note) => note !== "");
    const threshold = `more than ${Number((this.#maxFraction * 100).toFixed(2))}%`;
    return `${counts.broken} of ${counts.meshed} meshed pods broken ${where} (${[threshold, ...notes].join("; ")})`;
  }

  /** Runs one change and reports every scope whose open state it flipped. */
  #operation(change: () => void): StormTransition[] {
    this.#before = new Map();
    change();
    const transitions: StormTransition[] = [];
    for (const [scope, wasOpen] of this.#before) {
      const isCluster = scope === CLUSTER;
      const open = this.#isOpen(isCluster ? this.#cluster : this.#byNode.get(scope.slice(NODE.length)));
      if (open === wasOpen) continue;
      transitions.push(
        isCluster ? { scope: "cluster", node: "", open } : { scope: "node", node: scope.slice(NODE.length), open },
      );
    }
    // Nodes before the cluster, in the order they were touched.
    return transitions.sort((a, b) => (a.scope === b.scope ? 0 : a.scope === "node" ? -1 : 1));
  }

  #removeAlive(facts: PodFacts): void {
    const node = facts.nodeName ?? "";
    if (this.#replacements.has(facts.uid)) return; // holds a deleted pod's slot: not counted on its own
    const broken = this.#brokenPods.get(facts.uid);
    this.#brokenPods.delete(facts.uid);
    this.#add(node, {
      meshed: -1,
      broken: broken && !broken.explained ? -1 : 0,
      explained: broken?.explained ? -1 : 0,
    });
    this.#settle(facts.uid);
  }

  #addAlive(facts: PodFacts, standing: PodStanding, explainedBefore: boolean | undefined, firstSight: boolean): void {
    const node = facts.nodeName ?? "";
    const slotOf = this.#replacements.get(facts.uid) ?? (firstSight ? this.#claimSlot(facts) : undefined);
    if (slotOf !== undefined) {
      // A replacement judged healthy keeps the deleted pod's slot; judged broken, it counts on its own instead.
      const entry = this.#lingering.get(slotOf);
      if (!standing.broken) {
        // It may have been scheduled since it took the slot: remember where it will count later.
        if (entry) entry.replacement = { uid: facts.uid, node };
        return;
      }
      this.#replacements.delete(facts.uid);
      if (entry) this.#dropLingering(slotOf, entry);
    }
    const explained = standing.broken ? (explainedBefore ?? standing.explained ?? false) : false;
    if (standing.broken) this.#brokenPods.set(facts.uid, { explained });
    this.#add(node, { meshed: 1, broken: standing.broken && !explained ? 1 : 0, explained: explained ? 1 : 0 });
    this.#settle(facts.uid);
  }

  /** A new pod of an owner whose pod we deleted, created after that delete: it takes the slot. */
  #claimSlot(facts: PodFacts): string | undefined {
    const ownerUid = facts.owner?.uid;
    if (ownerUid === undefined || facts.createdAtMs === undefined || this.#lingering.has(facts.uid)) return undefined;
    for (const [uid, entry] of this.#lingering) {
      if (entry.ownerUid !== ownerUid || entry.replacement !== undefined || !entry.counting) continue;
      // creationTimestamp has whole seconds: a replacement made in the second of our delete still counts.
      if (facts.createdAtMs < Math.floor(entry.deletedAt.wallMs / 1000) * 1000) continue;
      entry.replacement = { uid: facts.uid, node: facts.nodeName ?? "" };
      this.#replacements.set(facts.uid, uid);
      return uid;
    }
    return undefined;
  }

  /** The pod UID left the cache (or its key now names another pod). */
  #left(uid: string): void {
    const slotOf = this.#replacements.get(uid);
    if (slotOf !== undefined) {
      this.#replacements.delete(uid);
      const entry = this.#lingering.get(slotOf);
      if (entry) entry.replacement = { uid: "", node: entry.replacement?.node ?? "" };
    }
  }

  /** A lingering slot counts exactly while the deleted pod is no longer counted as alive and broken. */
  #settle(uid: string): void {
    const entry = this.#lingering.get(uid);
    if (!entry) return;
    const counting = !this.#brokenPods.has(uid);
    if (counting === entry.counting) return;
    entry.counting = counting;
    const sign = counting ? 1 : -1;
    this.#add(entry.node, {
      meshed: sign,
      broken: entry.explained ? 0 : sign,
      explained: entry.explained ? sign : 0,
      lingering: entry.explained ? 0 : sign,
    });
  }

  #dropLingering(uid: string, entry: Lingering): void {
    this.#lingering.delete(uid);
    if (entry.counting) {
      this.#add(entry.node, {
        meshed: -1,
        broken: entry.explained ? 0 : -1,
        explained: entry.explained ? -1 : 0,
        lingering: entry.explained ? 0 : -1,
      });
    }
    // A healthy replacement that held the slot counts on its own from now on.
    const replacement = entry.replacement;
    if (replacement && replacement.uid !== "" && this.#replacements.get(replacement.uid) === uid) {
      this.#replacements.delete(replacement.uid);
      this.#add(replacement.node, { meshed: 1, broken: 0, explained: 0 });
    }
  }

  #isOpen(counts: Counts | undefined): boolean {
    if (!counts || counts.broken < this.#minBroken) return false;
    return counts.broken > this.#maxFraction * counts.meshed;
  }

  #add(node: string, delta: { meshed: number; broken: number; explained: number; lingering?: number }): void {
    for (const [scope, counts] of [
      [NODE + node, this.#byNode.get(node) ?? emptyCounts()],
      [CLUSTER, this.#cluster],
    ] as const) {
      if (!this.#before.has(scope)) this.#before.set(scope, this.#isOpen(counts));
      counts.meshed += delta.meshed;
      counts.broken += delta.broken;
      counts.explained += delta.explained;
      counts.lingering += delta.lingering ?? 0;
      if (scope === CLUSTER) continue;
      if (counts.meshed === 0) this.#byNode.delete(node);
      else this.#byNode.set(node, counts);
    }
  }
}

const NODE = "node/";
const CLUSTER = "cluster";
const emptyCounts = (): Counts => ({ meshed: 0, broken: 0, explained: 0, lingering: 0 });
