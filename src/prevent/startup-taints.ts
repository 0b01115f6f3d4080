// Startup-taint management: keeps new pods off a node until its CNI agents are Ready, by removing the node's
// startup taint (and, in continuous mode, adding it back while an agent stays NotReady). The reconciler of the
// startup-taint controller (controller/controller.ts, one worker, so the share cap is judged on a count no other
// write is changing); level-based: each node is judged afresh from the caches (nodes, agents) whenever either
// changes, or when a wait it asked for is over.

import type { EventRecorder } from "../act/event-recorder.js";
import type { ReconcileResult } from "../controller/reconcile-result.js";
import type { CniAgents } from "../informer/cni-agent-pods.js";
import type { StoreChange } from "../informer/facts-store.js";
import { FactsStore } from "../informer/facts-store.js";
import type { KubeTransport } from "../kube/transport.js";
import type { Logger } from "../observe/logger.js";
import type { WorkQueue } from "../queue/work-queue.js";
import type { ReadyBasis } from "../safety/cni-agents.js";
import { type Clock, type Instant, instantOf, systemClock } from "../util/clock.js";
import { messageOf } from "../util/message-of.js";
import { agentPresence } from "./node-agent-state.js";
import { type NodeFacts, nodeKey, sameNode, startupKeysOn } from "./node-facts.js";
import type { TaintMetrics } from "./taint-metrics.js";
import { patchTaints } from "./taint-patcher.js";
import { type AgentState, decideTaint, type HoldReason, type TaintDecision, type TaintPolicy } from "./taint-policy.js";

export type StartupTaintsOptions = {
  readonly policy: TaintPolicy;
  /** report: decide, log and count; never write. */
  readonly report: boolean;
  /** The CNI agent caches every node needs Ready. */
  readonly agents: readonly CniAgents[];
  readonly transport: KubeTransport;
  readonly logger: Logger;
  /** The controller's queue: node and agent changes put the node's key there. */
  readonly queue: Pick<WorkQueue, "add">;
  /** Writes the Node Events (the controller's recorder, drained at shutdown). */
  readonly events: Pick<EventRecorder, "postAbout">;
  readonly clock?: Clock | undefined;
};

/** What scan and explain show of a node. */
export type NodeTaintView = {
  readonly node: string;
  readonly present: readonly string[];
  readonly decision: TaintDecision;
};

export class StartupTaints {
  readonly nodes = new FactsStore<NodeFacts>(nodeKey, sameNode);
  readonly #options: StartupTaintsOptions;
  readonly #queue: Pick<WorkQueue, "add">;
  readonly #clock: Clock;
  #metrics: TaintMetrics | undefined;
  /**
   * Node → when this controller first saw one of its agents NotReady (continuous mode counts from here), on the
   * monotonic clock: a wall clock set forward must not make an agent look NotReady for long at once.
   */
  readonly #notReadySince = new Map<string, number>();
  /**
   * Node → when it was first seen carrying a managed key (its creation, when it had the key at first sight), on the
   * wall clock (the API server's creation time is): only shown (a gauge), never acted on. Its size is the number of
   * nodes tainted now, kept by every node change (no recount per reconcile).
   */
  readonly #taintedSince = new Map<string, number>();
  /** Node → why its taint is held now (the held-nodes gauge). */
  readonly #held = new Map<string, HoldReason>();
  /** `uid|action` already reported in report mode: counted once, not at every look. */
  readonly #reported = new Set<string>();

  constructor(options: StartupTaintsOptions) {
    this.#options = options;
    this.#queue = options.queue;
    this.#clock = options.clock ?? systemClock;
  }

  /** Attaches the metrics (made after this, since their gauges read from it). */
  set metrics(metrics: TaintMetrics) {
    this.#metrics = metrics;
  }

  /** The node reflector's change hook. */
  onNodeChange(change: StoreChange<NodeFacts>): void {
    const { key, previous, current } = change;
    const keys = this.#options.policy.keys;
    const had = startupKeysOn(previous?.taints, keys).length > 0;
    const has = current !== undefined && startupKeysOn(current.taints, keys).length > 0;
    if (!has) this.#taintedSince.delete(key);
    else if (!this.#taintedSince.has(key)) {
      const firstSight = previous === undefined && Number.isFinite(current.createdAtMs);
      this.#taintedSince.set(key, firstSight ? current.createdAtMs : this.#clock.now());
    }
    if (current === undefined) {
      this.#notReadySince.delete(key);
      this.#held.delete(key);
    }
    this.#queue.add(key);
    // A taint gone frees a place under the share cap: look again at the nodes it held back.
    if (had && !has) for (const [node, reason] of this.#held) if (reason === "share_cap") this.#queue.add(node);
  }

  /** An agent pod changed on the node (or vanished from it). */
  onAgentChange(node: string | undefined): void {
    if (node !== undefined && this.nodes.get(node)) this.#queue.add(node);
  }

  /**
   * The decision for a node right now, without acting. A one-shot command (scan) has only just seen the agents,
   * so it goes by the kubelet's Ready time ("claimed"): what a controller that has been watching would do.
   */
  view(node: string, basis: ReadyBasis = "observed"): NodeTaintView | undefined {
    const facts = this.nodes.get(node);
    if (!facts) return undefined;
    const present = startupKeysOn(facts.taints, this.#options.policy.keys);
    // Dry: a look changes nothing (the NotReady time is only ever started by the reconcile's own sight).
    return {
      node,
      present,
      decision: decideTaint(this.#input(facts, present, instantOf(this.#clock), basis, true), this.#options.policy),
    };
  }

  /** The nodes that carry a managed key, or would get one now, with what happens to them and why (scan). */
  views(basis: ReadyBasis = "observed"): NodeTaintView[] {
    const views: NodeTaintView[] = [];
    for (const facts of this.nodes.values()) {
      const view = this.view(facts.name, basis);
      if (view && (view.present.length > 0 || view.decision.kind !== "none")) views.push(view);
    }
    return views.sort((a, b) => a.node.localeCompare(b.node));
  }

  /** Gauges, read at scrape time. */
  taintedNodes(key: string): number {
    let count = 0;
    for (const facts of this.nodes.values()) if (facts.taints?.some((taint) => taint.key === key)) count++;
    return count;
  }

  heldNodes(reason: HoldReason): number {
    let count = 0;
    for (const held of this.#held.values()) if (held === reason) count++;
    return count;
  }

  longestSeconds(since: "taint" | "agent_ready"): number {
    const now = instantOf(this.#clock);
    let longestMs = 0;
    for (const [node, taintedAt] of this.#taintedSince) {
      if (since === "taint") {
        longestMs = Math.max(longestMs, now.wallMs - taintedAt);
        continue;
      }
      const agents = agentPresence(this.#options.agents, node, now);
      if (agents.kind === "ready") longestMs = Math.max(longestMs, Math.min(agents.forMs, now.wallMs - taintedAt));
    }
    return longestMs / 1000;
  }

  /** Judges the node afresh and acts; a failed write is retried with backoff by the controller. */
  async reconcile(node: string): Promise<ReconcileResult> {
    const facts = this.nodes.get(node);
    if (!facts) return { kind: "done" };
    const now = instantOf(this.#clock);
    const present = startupKeysOn(facts.taints, this.#options.policy.keys);
    const input = this.#input(facts, present, now);
    const decision = decideTaint(input, this.#options.policy);
    if (decision.kind === "hold") this.#held.set(node, decision.reason);
    else this.#held.delete(node);
    if (decision.kind === "hold" || decision.kind === "none") {
      return decision.retryAfterMs === undefined
        ? { kind: "done" }
        : { kind: "requeue", afterMs: decision.retryAfterMs };
    }
    try {
      await this.#act(facts, decision, input.agents, now.wallMs);
      return { kind: "done" };
    } catch (error) {
      this.#options.logger.warn("startup taint: could not change the node; retrying", {
        node,
        error: messageOf(error),
      });
      return { kind: "retry", notBeforeMs: 0, error: messageOf(error) };
    }
  }

  #input(facts: NodeFacts, present: readonly string[], now: Instant, basis: ReadyBasis = "observed", dry = false) {
    const presence = agentPresence(this.#options.agents, facts.name, now, basis);
    let agents: AgentState;
    if (presence.kind === "not_ready") {
      const since = this.#notReadySince.get(facts.name) ?? now.monoMs;
      if (!dry) this.#notReadySince.set(facts.name, since);
      agents = { kind: "not_ready", forMs: now.monoMs - since };
    } else {
      if (!dry) this.#notReadySince.delete(facts.name);
      agents = presence;
    }
    return { present, agents, nodes: this.nodes.size, tainted: this.#taintedSince.size };
  }

  async #act(
    facts: NodeFacts,
    decision: Extract<TaintDecision, { kind: "remove" | "add" }>,
    agents: AgentState,
    /** The wall clock: compared with the node's creation time (the API server's). */
    nowMs: number,
  ): Promise<void> {
    const { logger, transport } = this.#options;
    const keys = decision.kind === "remove" ? decision.keys : [decision.key];
    const log = { node: facts.name, action: decision.kind, keys, detail: decision.detail };
    if (this.#options.report) {
      const seen = `${facts.uid}|${decision.kind}|${keys.join(",")}`;
      if (this.#reported.has(seen)) return;
      this.#reported.add(seen);
      for (const key of keys) this.#metrics?.changes.inc({ key, action: decision.kind, result: "report" });
      logger.info(`startup taint: would ${decision.kind} (report mode)`, log);
      return;
    }
    const edit =
      decision.kind === "remove" ? { kind: "remove" as const, keys } : { kind: "add" as const, key: decision.key };
    let outcome: Awaited<ReturnType<typeof patchTaints>>;
    try {
      outcome = await patchTaints(transport, facts, edit);
    } catch (error) {
      for (const key of keys) this.#metrics?.changes.inc({ key, action: decision.kind, result: "fail" });
      throw error;
    }
    if (outcome.kind === "gone") return;
    // Into the cache at once: the share cap must count this write before the watch delivers it.
    const change = this.nodes.upsert(outcome.node);
    if (change) this.onNodeChange(change);
    if (outcome.kind === "unchanged") {
      logger.info("startup taint: already as wanted", log);
      return;
    }
    for (const key of keys) this.#metrics?.changes.inc({ key, action: decision.kind, result: "success" });
    if (decision.kind === "remove") {
      if (Number.isFinite(facts.createdAtMs)) {
        this.#metrics?.removalSeconds.observe({ since: "node_created" }, Math.max(0, nowMs - facts.createdAtMs) / 1000);
      }
      if (agents.kind === "ready") this.#metrics?.removalSeconds.observe({ since: "agent_ready" }, agents.forMs / 1000);
    }
    logger.info(`startup taint: ${decision.kind === "remove" ? "removed" : "added"}`, {
      ...log,
      attempts: outcome.attempts,
    });
    this.#event(facts, decision);
  }

  #event(facts: NodeFacts, decision: Extract<TaintDecision, { kind: "remove" | "add" }>): void {
    const removed = decision.kind === "remove";
    // One Event per change: a node tainted again (continuous) gets its Events again.
    const reason = removed ? "StartupTaintRemoved" : "StartupTaintAdded";
    this.#options.events.postAbout(
      { kind: "Node", name: facts.name, uid: facts.uid },
      {
        type: removed ? "Normal" : "Warning",
        reason,
        action: removed ? "RemoveTaint" : "AddTaint",
        note: decision.detail,
      },
      `${reason}@${facts.resourceVersion}`,
    );
  }
}
