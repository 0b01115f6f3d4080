// Helpers for election tests on the real API server: running electors, a both-leading sampler, service-account tokens.
import { CoreV1Api, KubeConfig, RbacAuthorizationV1Api, type V1PolicyRule } from "@kubernetes/client-node";
import { LeaderElector } from "../../../src/election/leader-elector.js";
import { KubeConfigCredentials } from "../../../src/kube/kubeconfig-credentials.js";
import { KubeTransport } from "../../../src/kube/transport.js";
import { type Clock, systemClock } from "../../../src/util/clock.js";
import type { ControlPlane } from "../../harness/control-plane.js";
import { collectingLogger } from "../../support/loggers.js";

/** Short enough for tests, long enough for a loaded machine: renew deadline > 1.2 × retry, < lease. */
export const TIMINGS = { leaseDurationMs: 4_000, renewDeadlineMs: 2_500, retryPeriodMs: 500 };
export const LEASE = "cni-repair-leader";

export type RunningElector = {
  readonly elector: LeaderElector;
  /** performance.now() of every leadership change. */
  readonly changes: { leading: boolean; at: number }[];
  stop(): Promise<void>;
};

const collected = collectingLogger({ format: "text" });
/** Log lines of every elector in the test, printed when it fails. */
export const logLines = collected.lines;
const logger = collected.logger;

/**
 * The system clock, but for a wall clock the test can set forward or back, as NTP or a VM resumed from a snapshot
 * does to a whole machine: now() jumps; monotonic time and the timers run on undisturbed.
 */
export class SteppedClock implements Clock {
  #offsetMs = 0;

  now(): number {
    return systemClock.now() + this.#offsetMs;
  }

  monotonic(): number {
    return systemClock.monotonic();
  }

  setTimeout(callback: () => void, delayMs: number, options?: { readonly unref?: boolean }) {
    return systemClock.setTimeout(callback, delayMs, options);
  }

  clearTimeout(handle: ReturnType<Clock["setTimeout"]>): void {
    systemClock.clearTimeout(handle);
  }

  step(ms: number): void {
    this.#offsetMs += ms;
  }
}

export function startElector(
  transport: KubeTransport,
  namespace: string,
  identity: string,
  clock: Clock = systemClock,
): RunningElector {
  const changes: { leading: boolean; at: number }[] = [];
  const elector = new LeaderElector({
    transport,
    namespace,
    name: LEASE,
    identity,
    ...TIMINGS,
    logger,
    clock,
    onLeadershipChange: (leading) => changes.push({ leading, at: performance.now() }),
  });
  const abort = new AbortController();
  const done = elector.run(abort.signal);
  let stopped: Promise<void> | undefined;
  return {
    elector,
    changes,
    stop: () => {
      abort.abort();
      stopped ??= done;
      return stopped;
    },
  };
}

/** Samples isLeader of every elector every 50 ms and counts the samples where more than one leads. */
export class LeaderSampler {
  overlaps = 0;
  samples = 0;
  readonly #timer: NodeJS.Timeout;

  constructor(electors: readonly RunningElector[]) {
    this.#timer = setInterval(() => {
      this.samples++;
      if (electors.filter((e) => e.elector.isLeader).length > 1) this.overlaps++;
    }, 50);
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}

/** A transport that reaches the API server through another address (a proxy), with the admin's credentials. */
export function transportVia(plane: ControlPlane, server: string, token?: string, user?: string): KubeTransport {
  const config = JSON.parse(plane.kubeconfigYaml(token, user)) as { clusters: { cluster: { server: string } }[] };
  for (const entry of config.clusters) entry.cluster.server = server;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(JSON.stringify(config));
  return new KubeTransport(new KubeConfigCredentials(kubeConfig), { userAgent: "cni-repair/test" });
}

/** A ServiceAccount bound (RoleBinding `name`) to a Role with these rules in the namespace; returns its token. */
export async function serviceAccountToken(
  plane: ControlPlane,
  namespace: string,
  name: string,
  rules: V1PolicyRule[],
): Promise<string> {
  const core = plane.kubeConfig().makeApiClient(CoreV1Api);
  const rbac = plane.kubeConfig().makeApiClient(RbacAuthorizationV1Api);
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  await rbac.createNamespacedRole({ namespace, body: { metadata: { name }, rules } });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
      subjects: [{ kind: "ServiceAccount", name, namespace }],
    },
  });
  const request = await core.createNamespacedServiceAccountToken({
    namespace,
    name,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  return request.status?.token ?? "";
}
