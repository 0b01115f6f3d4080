// Leader election as the controller uses it: where the Lease lives, and an elector wired to the leader metric.
import type { Config } from "../config/config.js";
import { electionIdentity } from "../election/identity.js";
import { LeaderElector } from "../election/leader-elector.js";
import type { ClusterCredentials } from "../kube/cluster-credentials.js";
import type { KubeTransport } from "../kube/transport.js";
import type { Logger } from "../observe/logger.js";
import type { Metrics } from "../observe/metrics.js";

/**
 * --leader-election-namespace, else POD_NAMESPACE, else the current context's namespace (kubectl's default: the
 * kubeconfig context's, or in cluster the service account's namespace file), else `default`.
 */
export function leaseNamespace(
  config: Config,
  credentials: ClusterCredentials,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const configured = config.leaderElection?.namespace;
  if (configured) return configured;
  if (env.POD_NAMESPACE) return env.POD_NAMESPACE;
  return credentials.namespace || "default";
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
    namespace: leaseNamespace(config, transport.credentials),
    name: election.id,
    identity: electionIdentity(process.env.POD_NAME),
    leaseDurationMs: election.leaseDurationMs,
    renewDeadlineMs: election.renewDeadlineMs,
    retryPeriodMs: election.retryPeriodMs,
    logger: logger.child({ component: "election" }),
    onLeadershipChange: (leading) => metrics.leader.set(leading ? 1 : 0),
  });
}
