// The startup self-check: can this identity do everything the configured mode needs?
import type { Config } from "../config/config.js";
import { isAmbient } from "../detect/rule.js";
import { describeMissing, missingPermissions, requiredPermissions } from "../kube/access-review.js";
import type { KubeTransport } from "../kube/transport.js";
import type { Logger } from "../observe/logger.js";
import { messageOf } from "../util/message-of.js";
import { leaseNamespace } from "./election.js";

/** Returns the report of missing permissions, or undefined when all are there (or cannot be checked yet). */
export async function checkPermissions(
  config: Config,
  transport: KubeTransport,
  log: Logger,
): Promise<string | undefined> {
  const single = config.namespaces.length === 1 ? config.namespaces[0] : undefined;
  const needed = requiredPermissions({
    mode: config.mode,
    deleteBarePods: config.deleteBarePods,
    electing: config.leaderElection !== undefined,
    leaseNamespace: leaseNamespace(config, transport.credentials),
    ...(config.leaderElection && { leaseName: config.leaderElection.id }),
    ...(single !== undefined && { watchNamespace: single }),
    watchNamespaces: config.rules.some(isAmbient),
    ...(config.startupTaint && { startupTaints: config.mode === "report" ? "report" : "write" }),
  });
  // Istio's repair settings are optional and not asked here: their reads find a refusal themselves, and say it with
  // the rules to grant (informer/istio-repair-watch.ts).
  try {
    const missing = await missingPermissions(transport, needed);
    if (missing.length === 0) {
      log.info("permissions checked", { permissions: needed.length });
      return undefined;
    }
    return describeMissing(missing);
  } catch (error) {
    // The server may simply not be up yet; the controller does not refuse to start for that.
    log.warn("could not check permissions", { error: messageOf(error) });
    return undefined;
  }
}
