// Startup-taint management: keeps new pods off a node until its CNI agents are Ready, by removing the node's
// startup taint (and, in continuous mode, adding it back while an agent stays NotReady). One worker, so the
// share cap is judged on a count no other write is changing; level-based: each node is judged afresh from the
// caches (nodes, agents) whenever either changes, or when a wait it asked for is over.

import type { EventRecorder } from "../act/event-recorder.js";
import type { StoreChange } from "../informer/facts-store.js";
import { FactsStore } from "../informer/facts-store.js";
import type { KubeTransport } from "../kube/transport.js";
import type { Logger } from "../observe/logger.js";
import { WorkQueue } from "../queue/work-queue.js";
import type { CniAgents, ReadyBasis } from "../safety/cni-agents.js";
import { messageOf } from "../util/message-of.js";
import { agentPresence } from "./node-agent-state.js";
import { type NodeFacts, nodeKey, sameNode, startupKeysOn } from "./node-facts.js";
import type { TaintMetrics } from "./taint-metrics.js";
import { patchTaints } from "./taint-patcher.js";
import { type AgentState, decideTaint, type HoldReason, type TaintDecision, type TaintPolicy } from "./taint-policy.js";

/** Leadership as this worker needs it; absent when this instance always acts. */
export type TaintLeadership = {
  readonly isLeader: boolean;
  waitForLeadership(signal: AbortSignal): Promise<boolean>;
};

export type StartupTaintsOptions = {
  readonly policy: TaintPolicy;
  /** report: decide, log and count; never write. */
  readonly report: boolean;
  /** The CNI agent caches every node needs Ready. */
  readonly agents: readonly CniAgents[];
  readonly transport: KubeTransport;
  readonly logger: Logger;
  readonly leadership?: TaintLeadership;
  /**
   * Resolves once the node and agent caches hold their first list; false if aborted first. Absent: the caller
   * starts run() only then (the manager starts every worker once every cache is listed).
   */
  /** Writes the Node Events (the controller's recorder, drained at shutdown). */
  readonly events: Pick<EventRecorder, "postAbout">;
  readonly cachesSynced?: (signal: AbortSignal) => Promise<boolean>;
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
  readonly #queue = new WorkQueue({ backoff: { baseMs: 1_000, maxMs: 60_000, jitter: 0.5 } });
  #metrics: TaintMetrics | undefined;
  /** Node → when this controller first saw one of its agents NotReady (continuous mode counts from here). */
  readonly #notReadySince = new Map<string, number>();
  /** Node → when it was first seen carrying a managed key (its creation, when it had the key at first sight). */
  readonly #taintedSince = new Map<string, number>();
  /** Node → why its taint is held now (the held-nodes gauge). */
  readonly #held = new Map<string, HoldReason>();
  /** `uid|action` already reported in report mode: counted once, not at every look. */
  readonly #reported = new Set<string>();

  constructor(options: StartupTaintsOptions) {
    this.#options = options;
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
      this.#taintedSince.set(key, firstSight ? current.createdAtMs : Date.now());
    }
    if (current === undefined) {
      this.#notReadySince.delete(key);
      this.#held.delete(key);
      this.#queue.forget(key);
    }
    this.#queue.add(key);
    // A taint gone frees a place under the share cap: look again at the nodes it held back.
    if (had && !has) for (const [node, reason] of this.#held) if (reason === "share_cap") this.#queue.add(node);
  }

  /** An agent pod changed on the node (or vanished from it). */
  onAgentChange(node: string | undefined): void {
    if (node !== undefined && this.nodes.get(node)) this.#queue.add(node);
  }

  async run(signal: AbortSignal): Promise<void> {
    const { leadership, logger } = this.#options;
    signal.addEventListener("abort", () => this.#queue.shutDown(), { once: true });
    if (this.#options.cachesSynced && !(await this.#options.cachesSynced(signal))) return;
    for (const facts of this.nodes.values()) this.#queue.add(facts.name);
    while (!signal.aborted) {
      if (leadership && !leadership.isLeader && !(await leadership.waitForLeadership(signal))) break;
      const node = await this.#queue.get(signal);
      if (node === undefined) break;
      try {
        await this.#reconcile(node);
        this.#queue.forget(node);
      } catch (error) {
        const delayMs = this.#queue.addRateLimited(node);
        logger.warn("startup taint: could not change the node; retrying", {
          node,
          error: messageOf(error),
          retryInMs: Math.round(delayMs),
        });
      } finally {
        this.#queue.done(node);
      }
    }
  }

  /**
   * The decision for a node right now, without acting. A one-shot command (scan) has only just seen the agents,
   * so it goes by the kubelet's Ready time ("claimed"): what a controller that has been watching would do.
   */
  view(node: string, nowMs = Date.now(), basis: ReadyBasis = "observed"): NodeTaintView | undefined {
    const facts = this.nodes.get(node);
    if (!facts) return undefined;
    const present = startupKeysOn(facts.taints, this.#options.policy.keys);
    return { node, present, decision: decideTaint(this.#input(facts, present, nowMs, basis), this.#options.policy) };
  }

  /** The nodes that carry a managed key, or would get one now, with what happens to them and why (scan). */
  views(nowMs = Date.now(), basis: ReadyBasis = "observed"): NodeTaintView[] {
    const views: NodeTaintView[] = [];
    for (const facts of this.nodes.values()) {
      const view = this.view(facts.name, nowMs, basis);
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

  longestSeconds(since: "taint" | "agent_ready", nowMs = Date.now()): number {
    let longestMs = 0;
    for (const [node, taintedAt] of this.#taintedSince) {
      if (since === "taint") {
        longestMs = Math.max(longestMs, nowMs - taintedAt);
        continue;
      }
      const agents = agentPresence(this.#options.agents, node, nowMs);
      if (agents.kind === "ready") longestMs = Math.max(longestMs, Math.min(agents.forMs, nowMs - taintedAt));
    }
    return longestMs / 1000;
  }

  async #reconcile(node: string): Promise<void> {
    const facts = this.nodes.get(node);
    if (!facts) return;
    const nowMs = Date.now();
    const present = startupKeysOn(facts.taints, this.#options.policy.keys);
    const input = this.#input(facts, present, nowMs);
    const decision = decideTaint(input, this.#options.policy);
    if (decision.kind === "hold") this.#held.set(node, decision.reason);
    else this.#held.delete(node);
    const retryAfterMs = decision.kind === "hold" || decision.kind === "none" ? decision.retryAfterMs : undefined;
    if (retryAfterMs !== undefined) this.#queue.addAfter(node, retryAfterMs);
    if (decision.kind === "remove" || decision.kind === "add") await this.#act(facts, decision, input.agents, nowMs);
  }

  #input(facts: NodeFacts, present: readonly string[], nowMs: number, basis: ReadyBasis = "observed") {
    const presence = agentPresence(this.#options.agents, facts.name, nowMs, basis);
    let agents: AgentState;
    if (presence.kind === "not_ready") {
      const since = this.#notReadySince.get(facts.name) ?? nowMs;
      this.#notReadySince.set(facts.name, since);
      agents = { kind: "not_ready", forMs: nowMs - since };
    } else {
      this.#notReadySince.delete(facts.name);
      agents = presence;
    }
    let tainted = 0;
    for (const other of this.nodes.values())
      if (startupKeysOn(other.taints, this.#options.policy.keys).length > 0) tainted++;
    return { present, agents, nodes: this.nodes.size, tainted };
  }

  async #act(
    facts: NodeFacts,
    decision: Extract<TaintDecision, { kind: "remove" | "add" }>,
    agents: AgentState,
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
