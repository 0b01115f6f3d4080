// Leader election as the controller uses it: where the Lease lives, and an elector wired to the leader metric.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config/config.js";
import { electionIdentity } from "../election/identity.js";
import { LeaderElector } from "../election/leader-elector.js";
import type { KubeTransport } from "../kube/transport.js";
import type { Logger } from "../observe/logger.js";
import type { Metrics } from "../observe/metrics.js";

const NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

/** --leader-election-namespace, else the pod's own namespace (POD_NAMESPACE or the service account's), else default. */
export function leaseNamespace(config: Config, env: NodeJS.ProcessEnv = process.env): string {
  const configured = config.leaderElection?.namespace;
  if (configured) return configured;
  if (env.POD_NAMESPACE) return env.POD_NAMESPACE;
  const file = join(env.CNI_REPAIR_IN_CLUSTER_ROOT ?? "", NAMESPACE_FILE);
  if (existsSync(file)) {
    const namespace = readFileSync(file, "utf8").trim();
    if (namespace) return namespace;
  }
  return "default";
}

/** An elector for the configured Lease, or undefined when election is off. */
export function createElector(
  config: Config,
  transport: KubeTransport,
  metrics: Metrics,
  logger: Logger,
): LeaderElector | undefined {
  const election = config.leaderElection;
  if (!election) return undefined;
  return new LeaderElector({
    transport,
    namespace: leaseNamespace(config),
    name: election.id,
    identity: electionIdentity(process.env.POD_NAME),
    leaseDurationMs: election.leaseDurationMs,
    renewDeadlineMs: election.renewDeadlineMs,
    retryPeriodMs: election.retryPeriodMs,
    logger: logger.child({ component: "election" }),
    onLeadershipChange: (leading) => metrics.leader.set(leading ? 1 : 0),
  });
}
