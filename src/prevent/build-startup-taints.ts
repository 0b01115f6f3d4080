// Assembles startup-taint management from the config and the agent caches the readiness gate already keeps:
// the node watch, the worker, its metrics.
import type { Registry } from "prom-client";
import type { EventRecorder } from "../act/event-recorder.js";
import type { Config } from "../config/config.js";
import type { ReflectorObserver, RunningCache } from "../informer/reflector.js";
import type { KubeTransport } from "../kube/transport.js";
import type { Logger } from "../observe/logger.js";
import type { CniAgents } from "../safety/cni-agents.js";
import { nodeReflector } from "./node-reflector.js";
import { StartupTaints, type TaintLeadership } from "./startup-taints.js";
import { createTaintMetrics } from "./taint-metrics.js";

export type StartupTaintParts = { readonly taints: StartupTaints; readonly reflector: RunningCache };

export function buildStartupTaints(
  config: Config,
  deps: {
    readonly transport: KubeTransport;
    /** The CNI agent caches (not ztunnel's): every one must be Ready on a node before its taint goes. */
    readonly agents: readonly CniAgents[];
    readonly logger: Logger;
    readonly registry?: Registry | undefined;
    readonly leadership?: TaintLeadership | undefined;
    /** Decide and show, never write (scan). */
    readonly readOnly?: boolean;
    /** The Node Events go through the controller's recorder (counted when they fail, drained at shutdown). */
    readonly events: Pick<EventRecorder, "postAbout">;
    /** The node watch's metrics and logs, as every other watch has. */
    readonly observer: ReflectorObserver;
  },
): StartupTaintParts | undefined {
  const settings = config.startupTaint;
  if (!settings) return undefined;
  const taints = new StartupTaints({
    policy: { ...settings, minReadyMs: config.cniAgentGate?.minReadyMs ?? 0 },
    report: config.mode === "report" || deps.readOnly === true,
    agents: deps.agents,
    transport: deps.transport,
    logger: deps.logger,
    ...(deps.leadership && { leadership: deps.leadership }),
    events: deps.events,
  });
  const reflector = nodeReflector(config, deps.transport, taints.nodes, deps.observer);
  reflector.subscribe((change) => taints.onNodeChange(change));
  if (deps.registry) taints.metrics = createTaintMetrics(deps.registry, settings.keys, taints);
  return { taints, reflector };
}
