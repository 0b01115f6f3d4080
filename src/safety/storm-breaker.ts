// The storm breaker: when a large share of a node's (or the cluster's) meshed pods are broken at once, the
// CNI problem is systemic and deleting would only cause a mass restart; hold until the share falls.
import type { PodFacts } from "../detect/facts.js";

/** How one pod counts: meshed (carries a rule's marker, alive) and, of those, broken now. */
export type PodStanding = { readonly meshed: boolean; readonly broken: boolean };

type Counts = { meshed: number; broken: number };

export type StormScope = "node" | "cluster";

/** A breaker that opened or closed with the last update: "" is the cluster, otherwise a node name. */
export type StormTransition = { readonly scope: StormScope; readonly node: string; readonly open: boolean };

export class StormBreaker {
  readonly #maxFraction: number;
  readonly #minBroken: number;
  readonly #byNode = new Map<string, Counts>();
  readonly #cluster: Counts = { meshed: 0, broken: 0 };

  constructor(options: { maxBrokenFraction: number; minBroken: number }) {
    this.#maxFraction = options.maxBrokenFraction;
    this.#minBroken = options.minBroken;
  }

  /** Moves one pod from its old standing to its new one; returns the breakers this opened or closed. */
  update(
    previous: { facts: PodFacts; standing: PodStanding } | undefined,
    current: { facts: PodFacts; standing: PodStanding } | undefined,
  ): StormTransition[] {
    const nodes = new Set([previous?.facts.nodeName ?? "", current?.facts.nodeName ?? ""]);
    const before = [...nodes].map((node) => this.#isOpen(this.#byNode.get(node)));
    const clusterBefore = this.#isOpen(this.#cluster);
    if (previous) this.#add(previous.facts.nodeName ?? "", previous.standing, -1);
    if (current) this.#add(current.facts.nodeName ?? "", current.standing, 1);
    const transitions: StormTransition[] = [];
    [...nodes].forEach((node, i) => {
      const open = this.#isOpen(this.#byNode.get(node));
      if (open !== before[i]) transitions.push({ scope: "node", node, open });
    });
    const clusterOpen = this.#isOpen(this.#cluster);
    if (clusterOpen !== clusterBefore) transitions.push({ scope: "cluster", node: "", open: clusterOpen });
    return transitions;
  }

  /** The breaker that stops deleting this pod now, if any. */
  openFor(facts: PodFacts): StormScope | undefined {
    if (this.#isOpen(this.#byNode.get(facts.nodeName ?? ""))) return "node";
    if (this.#isOpen(this.#cluster)) return "cluster";
    return undefined;
  }

  /** "3 of 4 meshed pods broken on node n1", for Events and logs. */
  describe(scope: StormScope, node: string): string {
    const counts = scope === "node" ? (this.#byNode.get(node) ?? { meshed: 0, broken: 0 }) : this.#cluster;
    const where = scope === "node" ? `on node ${node}` : "in the cluster";
    return `${counts.broken} of ${counts.meshed} meshed pods broken ${where} (more than ${Number((this.#maxFraction * 100).toFixed(2))}%)`;
  }

  #isOpen(counts: Counts | undefined): boolean {
    if (!counts || counts.broken < this.#minBroken) return false;
    return counts.broken > this.#maxFraction * counts.meshed;
  }

  #add(node: string, standing: PodStanding, sign: 1 | -1): void {
    if (!standing.meshed) return;
    const counts = this.#byNode.get(node) ?? { meshed: 0, broken: 0 };
    counts.meshed += sign;
    this.#cluster.meshed += sign;
    if (standing.broken) {
      counts.broken += sign;
      this.#cluster.broken += sign;
    }
    if (counts.meshed === 0) this.#byNode.delete(node);
    else this.#byNode.set(node, counts);
  }
}
