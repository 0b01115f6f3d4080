// The startup-taint reconciler: judges one node (prevent/taint-judge.ts) and makes the one write its decision asks
// for, removing the node's startup taint once its CNI agents are Ready (and, in continuous mode, adding it back
// while an agent stays NotReady). Run by the startup-taint controller (controller/controller.ts, one worker, so the
// share cap is judged on a count no other write of ours is changing); level-based: its triggers
// (prevent/taint-triggers.ts) put the node's key on the controller's queue whenever the node or its agents change.
// Each write tests the version judged, is made only while this replica holds the Lease (checked right before it),
// and is remembered until the watch delivers it (prevent/taint-expectations.ts).
import type { EventRecorder } from "../act/event-recorder.js";
import type { ReconcileResult } from "../controller/reconcile-result.js";
import type { NodeFacts } from "../informer/node-facts.js";
import type { KubeTransport } from "../kube/transport.js";
import type { Logger } from "../observe/logger.js";
import { messageOf } from "../util/message-of.js";
import type { TaintExpectations } from "./taint-expectations.js";
import type { TaintJudge, TaintJudgement } from "./taint-judge.js";
import type { TaintMetrics } from "./taint-metrics.js";
import { patchTaints } from "./taint-patcher.js";
import type { TaintDecision } from "./taint-policy.js";

/**
 * A node the cache has not caught up with is looked at again this soon: a look costs no request, and a newer version
 * that changes nothing the judgement reads (a status update) wakes no trigger.
 */
const PENDING_RECHECK_MS = 250;

export type StartupTaintsOptions = {
  readonly judge: TaintJudge;
  readonly expectations: TaintExpectations;
  /** report: decide, log and count; never write. */
  readonly report: boolean;
  readonly transport: KubeTransport;
  /** Whether this replica may write now (it holds the Lease); read right before each write. */
  readonly mayWrite: () => boolean;
  readonly logger: Logger;
  /** Writes the Node Events (the controller's recorder, drained at shutdown). */
  readonly events: Pick<EventRecorder, "postAbout">;
  readonly metrics?: TaintMetrics | undefined;
};

type Change = TaintJudgement & { readonly decision: Extract<TaintDecision, { kind: "remove" | "add" }> };

export class StartupTaints {
  readonly #options: StartupTaintsOptions;
  /** `uid|action` already reported in report mode: counted once, not at every look. */
  readonly #reported = new Set<string>();

  constructor(options: StartupTaintsOptions) {
    this.#options = options;
  }

  /** Judges the node afresh and acts; a failed write is retried with backoff by the controller. */
  async reconcile(node: string): Promise<ReconcileResult> {
    const { judge, expectations } = this.#options;
    // Not judged on the version our own last write replaced or was refused on: wait for the watch to deliver more.
    if (expectations.pending(node)) return { kind: "requeue", afterMs: PENDING_RECHECK_MS };
    const judged = judge.judge(node);
    if (!judged) {
      judge.forget(node);
      return { kind: "done" };
    }
    const { decision } = judged;
    if (decision.kind === "hold" || decision.kind === "none") {
      return decision.retryAfterMs === undefined
        ? { kind: "done" }
        : { kind: "requeue", afterMs: decision.retryAfterMs };
    }
    try {
      return await this.#act({ ...judged, decision });
    } catch (error) {
      this.#options.logger.warn("startup taint: could not change the node; retrying", {
        node,
        error: messageOf(error),
      });
      return { kind: "retry", notBeforeMs: 0, error: messageOf(error) };
    }
  }

  async #act(change: Change): Promise<ReconcileResult> {
    const { logger, transport, metrics } = this.#options;
    const { facts, decision } = change;
    const keys = decision.kind === "remove" ? decision.keys : [decision.key];
    const log = { node: facts.name, action: decision.kind, keys, detail: decision.detail };
    if (this.#options.report) {
      const seen = `${facts.uid}|${decision.kind}|${keys.join(",")}`;
      if (!this.#reported.has(seen)) {
        this.#reported.add(seen);
        for (const key of keys) metrics?.changes.inc({ key, action: decision.kind, result: "report" });
        logger.info(`startup taint: would ${decision.kind} (report mode)`, log);
      }
      return { kind: "done" };
    }
    // Right before the write, on the monotonic clock: this process may have been frozen since the controller
    // checked, and the Lease may be another's now. The key goes back for the next term.
    if (!this.#options.mayWrite()) {
      logger.info("startup taint: not leading now; the node is left for the next term", log);
      return { kind: "requeue", afterMs: 0 };
    }
    const edit =
      decision.kind === "remove" ? { kind: "remove" as const, keys } : { kind: "add" as const, key: decision.key };
    let outcome: Awaited<ReturnType<typeof patchTaints>>;
    try {
      outcome = await patchTaints(transport, facts, edit);
    } catch (error) {
      for (const key of keys) metrics?.changes.inc({ key, action: decision.kind, result: "fail" });
      throw error;
    }
    switch (outcome.kind) {
      case "gone":
        return { kind: "done" };
      case "unchanged":
        logger.info("startup taint: already as wanted", log);
        return { kind: "done" };
      case "stale":
        logger.info("startup taint: the node changed since it was judged; judging it again once the watch has it", {
          ...log,
          status: outcome.status,
        });
        this.#options.expectations.wrote(facts.name, "refused", facts.resourceVersion);
        return { kind: "requeue", afterMs: PENDING_RECHECK_MS };
      case "patched":
        this.#options.expectations.wrote(facts.name, decision.kind, facts.resourceVersion);
        this.#observe(change);
        logger.info(`startup taint: ${decision.kind === "remove" ? "removed" : "added"}`, log);
        this.#event(facts, decision);
        return { kind: "done" };
    }
  }

  #observe({ facts, decision, agents, now }: Change): void {
    const { metrics } = this.#options;
    const keys = decision.kind === "remove" ? decision.keys : [decision.key];
    for (const key of keys) metrics?.changes.inc({ key, action: decision.kind, result: "success" });
    if (decision.kind !== "remove") return;
    // The wall clock: compared with the node's creation time (the API server's).
    if (Number.isFinite(facts.createdAtMs)) {
      metrics?.removalSeconds.observe({ since: "node_created" }, Math.max(0, now.wallMs - facts.createdAtMs) / 1000);
    }
    if (agents.kind === "ready") metrics?.removalSeconds.observe({ since: "agent_ready" }, agents.forMs / 1000);
  }

  #event(facts: NodeFacts, decision: Change["decision"]): void {
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
