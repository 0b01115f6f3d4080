// Feeds cache changes into the work queue and runs reconciles: bounded concurrency, retries, resync,
// guard bookkeeping, and (with leader election) acting only while leading.
import PQueue from "p-queue";
import { type DetectContext, detect, meshRule } from "../detect/detect.js";
import type { PodFacts } from "../detect/facts.js";
import type { Rule } from "../detect/rule.js";
import type { PodChange } from "../informer/pod-store.js";
import type { Logger } from "../observe/logger.js";
import type { Metrics } from "../observe/metrics.js";
import type { WorkQueue } from "../queue/work-queue.js";
import type { SafetyGuards } from "../safety/guards.js";
import type { Holds } from "../safety/holds.js";
import type { PodStanding, StormTransition } from "../safety/storm-breaker.js";
import { messageOf } from "../util/message-of.js";
import type { BrokenPods } from "./broken-pods.js";
import type { Reconciler } from "./reconciler.js";

/** Leadership as the controller sees it; absent when this instance always acts. */
export type Leadership = {
  readonly isLeader: boolean;
  waitForLeadership(signal: AbortSignal): Promise<boolean>;
};

export type ControllerOptions = {
  readonly queue: WorkQueue;
  readonly reconciler: Reconciler;
  readonly broken: BrokenPods;
  readonly guards: SafetyGuards;
  readonly holds: Holds;
  readonly rules: readonly Rule[];
  /** The clock and namespace labels detection needs now. */
  readonly context: () => DetectContext;
  /** Keys of the cached pods in a namespace. */
  readonly podKeysIn: (namespace: string) => Iterable<string>;
  readonly workers: number;
  /** Failed attempts per key before giving up until the next change or resync. */
  readonly maxRetries: number;
  /** 0: off. */
  readonly resyncPeriodMs: number;
  readonly leadership?: Leadership;
  /**
   * Resolves once every cache (pods, node agents, namespaces) holds its first list; false if aborted first.
   * Deciding earlier would hold pods for "no Ready agent" only because the agent list has not arrived yet.
   */
  readonly cachesSynced?: (signal: AbortSignal) => Promise<boolean>;
  readonly metrics: Metrics;
  readonly logger: Logger;
};

const STORM_EXPIRY_CHECK_MS = 1_000;

export class Controller {
  readonly #options: ControllerOptions;
  readonly #executor: PQueue;
  #openNodeBreakers = 0;

  constructor(options: ControllerOptions) {
    this.#options = options;
    this.#executor = new PQueue({ concurrency: options.workers });
  }

  /**
   * Called for every cache change. Keeps the guards' counts current, frees the in-flight slot of a pod that
   * is gone, and queues the pod only if it looks broken now or was broken before: the reconcile re-reads
   * the cache anyway, and a 100k-pod initial list should not mean 100k reconciles.
   */
  onChange(change: PodChange): void {
    const { previous, current } = change;
    const { guards, broken, rules } = this.#options;
    const context = this.#options.context();
    const verdict = current === undefined ? undefined : detect(current, rules, context);
    const brokenNow = verdict?.broken === true;
    const before = previous && this.#standing(previous, detect(previous, rules, context).broken, context);
    const now = current && this.#standing(current, brokenNow, context);
    const explained =
      verdict?.broken === true && current !== undefined && guards.breakageExplained(current, verdict.rule);
    guards.standingChanged(
      before && previous && { facts: previous, standing: before },
      now && current && { facts: current, standing: { ...now, explained } },
    );
    if (previous && previous.uid !== current?.uid) {
      const freed = guards.podGone(previous.uid);
      if (freed) {
        this.#enqueueAll(this.#options.holds.keys(["node_inflight"], { node: freed.node }));
        this.#enqueueAll(this.#options.holds.keys(["namespace_inflight"], { namespace: freed.namespace }));
      }
    }
    if (brokenNow || broken.has(change.key)) this.#enqueue(change.key);
    // Not broken yet, but time alone may make it so (an ambient pod inside its enrolment grace).
    else if (verdict && !verdict.broken && verdict.recheckAfterMs !== undefined) {
      this.#options.queue.addAfter(change.key, verdict.recheckAfterMs);
    }
  }

  /** A namespace's labels changed: every pod in it may have entered or left a rule's scope. */
  onNamespaceChange(namespace: string): void {
    for (const key of this.#options.podKeysIn(namespace)) this.#enqueue(key);
  }

  /** A node agent (CNI agent, ztunnel) on the node changed: pods held for one there may go now. */
  onAgentChange(node: string | undefined): void {
    if (node === undefined) return;
    this.#enqueueAll(this.#options.holds.keys(["cni_agent_not_ready", "ztunnel_not_ready"], { node }));
  }

  /** A held pod's deletion turn moved earlier (a skipped delete gave its token back): look again then. */
  wake(key: string, afterMs: number): void {
    this.#options.queue.addAfter(key, afterMs);
  }

  /** Re-queues every pod known to be broken, so one missed or failed repair is picked up again. */
  resync(): void {
    this.#enqueueAll(this.#options.broken.keys());
  }

  /** Hands keys to the workers until the queue shuts down, then waits for in-flight reconciles. */
  async run(signal: AbortSignal): Promise<void> {
    const { queue, resyncPeriodMs, leadership, logger } = this.#options;
    const resync = resyncPeriodMs > 0 ? setInterval(() => this.resync(), resyncPeriodMs) : undefined;
    // The storm breaker's window passes with time alone: let it forget old deletes (and maybe close).
    const expire = setInterval(() => this.#options.guards.expire(), STORM_EXPIRY_CHECK_MS);
    signal.addEventListener("abort", () => queue.shutDown(), { once: true });
    try {
      if (this.#options.cachesSynced && !(await this.#options.cachesSynced(signal))) return;
      for (;;) {
        if (leadership && !leadership.isLeader) {
          // Followers keep their cache warm and their queue deduplicated, but act on nothing.
          if (!(await leadership.waitForLeadership(signal))) break;
          // The previous leader may have spent the burst a moment ago: pace from empty (see README).
          this.#options.guards.startTerm();
          logger.info("leading: acting on broken pods", { broken: this.#options.broken.size });
          this.resync();
        }
        // Take a key only when a worker is free, so keys wait in the deduplicating queue, not here.
        await this.#executor.onSizeLessThan(1);
        const key = await queue.get(signal);
        if (key === undefined) break;
        this.#updateDepth();
        if (leadership && !leadership.isLeader) {
          queue.done(key);
          queue.add(key);
          continue;
        }
        void this.#executor.add(() => this.#process(key));
      }
    } finally {
      clearInterval(resync);
      clearInterval(expire);
    }
    await this.#executor.onIdle();
  }

  async #process(key: string): Promise<void> {
    const { queue, reconciler, metrics, logger, maxRetries, leadership } = this.#options;
    // The key may have waited for a free worker while leadership was lost: hand it back untouched, for the next
    // term (or the next leader's resync), rather than act without the Lease.
    if (leadership && !leadership.isLeader) {
      queue.done(key);
      queue.add(key);
      this.#updateDepth();
      return;
    }
    const timer = metrics.reconcileDurationSeconds.startTimer();
    try {
      const result = await reconciler.reconcile(key);
      switch (result.kind) {
        case "done":
          queue.forget(key);
          break;
        case "requeue":
          if (!result.keepFailures) queue.forget(key);
          queue.addAfter(key, result.afterMs);
          break;
        case "retry":
          this.#retry(key, result.notBeforeMs, result.error, maxRetries);
          break;
      }
    } catch (error) {
      // A bug or an unexpected error must not kill the worker: log it and retry like a failed action.
      logger.error("reconcile threw", {
        key,
        error: error instanceof Error && error.stack ? error.stack : String(error),
      });
      this.#retry(key, 0, messageOf(error), maxRetries);
    } finally {
      timer();
      queue.done(key);
      this.#updateDepth();
    }
  }

  #retry(key: string, notBeforeMs: number, error: string, maxRetries: number): void {
    const { queue, metrics, logger } = this.#options;
    if (queue.failures(key) >= maxRetries) {
      metrics.retriesExhausted.inc();
      logger.warn("giving up on pod until it changes or the next resync", { key, retries: maxRetries, error });
      queue.forget(key);
      return;
    }
    metrics.queueRetries.inc();
    // Retry-After from the server wins when it asks for a longer pause than our backoff.
    queue.addRateLimited(key, notBeforeMs);
  }

  /** A storm breaker opened or closed: the gauge, a log line, and (closed) the pods it held look again. */
  onStormTransition(transition: StormTransition): void {
    const { metrics, logger, holds, guards } = this.#options;
    const where = transition.scope === "node" ? { node: transition.node } : {};
    if (transition.scope === "node") {
      this.#openNodeBreakers += transition.open ? 1 : -1;
      metrics.stormBreakerOpen.set({ scope: "node" }, this.#openNodeBreakers);
    } else {
      metrics.stormBreakerOpen.set({ scope: "cluster" }, transition.open ? 1 : 0);
    }
    const detail = guards.storm.describe(transition.scope, transition.node);
    if (transition.open) {
      logger.warn("storm breaker open: holding deletions", { scope: transition.scope, ...where, detail });
      // Pods waiting for a later guard (their turn in the pace, an in-flight slot) are now held by the storm:
      // look again at once, so the hold reason and the storm alert say so.
      this.#enqueueAll(holds.keys(["rate_limit", "node_inflight", "namespace_inflight"], where));
      return;
    }
    logger.info("storm breaker closed: deletions resume", { scope: transition.scope, ...where, detail });
    this.#enqueueAll(holds.keys(["storm"], where));
  }

  /** How the pod counts for the storm breaker: only alive, unfinished, meshed pods count at all. */
  #standing(facts: PodFacts, broken: boolean, context: DetectContext): PodStanding | undefined {
    if (facts.deleting || facts.phase === "Failed" || facts.phase === "Succeeded") return undefined;
    if (!meshRule(facts, this.#options.rules, context)) return undefined;
    return { meshed: true, broken };
  }

  #enqueueAll(keys: Iterable<string>): void {
    for (const key of keys) this.#enqueue(key);
  }

  #enqueue(key: string): void {
    this.#options.queue.add(key);
    this.#updateDepth();
  }

  #updateDepth(): void {
    this.#options.metrics.queueDepth.set(this.#options.queue.depth);
  }
}
