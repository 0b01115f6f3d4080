// The taint writes this controller made, or had refused as stale, that its node cache has not caught up with yet
// (client-go's ControllerExpectations): the share cap counts a node just tainted before the watch delivers it, and
// a node is not judged again on the version a write replaced or was refused on (that would only be refused again).
// The store stays the watch's alone. A write is caught up with once the cached node's resourceVersion moves past the
// one it was judged on: the write tested that version, so the next one the watch delivers is the write's own or a
// later one.
import type { NodeFacts } from "../informer/node-facts.js";
import type { Clock } from "../util/clock.js";

/** A write not seen within this long is given up on (client-go's ExpectationsTimeout): the watch missed it. */
export const EXPECTATION_TIMEOUT_MS = 5 * 60_000;

type Pending = {
  /** refused: the node had changed since the version judged (the patch's test failed). */
  readonly kind: "add" | "remove" | "refused";
  readonly judgedVersion: string;
  readonly atMs: number;
};

export class TaintExpectations {
  readonly #nodes: { get(name: string): NodeFacts | undefined };
  readonly #clock: Clock;
  readonly #pending = new Map<string, Pending>();

  constructor(nodes: { get(name: string): NodeFacts | undefined }, clock: Clock) {
    this.#nodes = nodes;
    this.#clock = clock;
  }

  /** A write of the node, judged on `judgedVersion`, succeeded (add, remove) or was refused as stale. */
  wrote(node: string, kind: Pending["kind"], judgedVersion: string): void {
    this.#pending.set(node, { kind, judgedVersion, atMs: this.#clock.monotonic() });
  }

  /** The cache has not caught up with the node's last write (or refusal) yet. */
  pending(node: string): boolean {
    const write = this.#pending.get(node);
    if (write === undefined) return false;
    const cached = this.#nodes.get(node);
    const seen = cached === undefined || cached.resourceVersion !== write.judgedVersion;
    if (!seen && this.#clock.monotonic() - write.atMs < EXPECTATION_TIMEOUT_MS) return true;
    this.#pending.delete(node);
    return false;
  }

  /** Taints added and not seen yet: the share cap counts them as nodes tainted now. */
  pendingAdds(): number {
    let count = 0;
    for (const [node, write] of this.#pending) if (write.kind === "add" && this.pending(node)) count++;
    return count;
  }
}
