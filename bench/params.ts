// Benchmark parameters from the environment (BENCH_*), with defaults sized for a ~15-minute run on 2 cores.

export type BenchParams = {
  /** Largest population; the issue's steps below it (1k, 10k, 50k, 100k) are run too, and 0 for the empty baseline. */
  readonly pods: number;
  readonly sizes: readonly number[];
  /** Runs of each controller per size, alternating which goes first. */
  readonly rounds: number;
  /** Background churn: status writes per second on healthy pods. */
  readonly churnRate: number;
  /** Churn-only window over which CPU per watch event is measured. */
  readonly cpuSeconds: number;
  /** Scenario 1: victims turned broken at uniformly random moments over the window. */
  readonly latencyPods: number;
  readonly latencyWindowSeconds: number;
  /** Total churn before the after-churn memory reading (at least cpuSeconds + the latency window). */
  readonly churnSeconds: number;
  /** Scenario 4, at the largest size: pods broken at once. */
  readonly massPods: number;
  /** How long to watch the default-limits mass repair (cni-repair only) before giving up on completion. */
  readonly massLimitedSeconds: number;
  /** The long churn at the largest size (0: none): every controller's replicas at once, memory sampled. */
  readonly soakSeconds: number;
  readonly soakReplicas: number;
  readonly soakSampleSeconds: number;
  /** Rounds of the per-node (DaemonSet, in-cluster style) runs before the population grows; 0 skips them. */
  readonly perNodeRounds: number;
  /** The node-scoped side-by-side runs with Istio's controller (scenarios/side-by-side.ts); 0 pods skips them. */
  readonly side: SideBySideParams;
  /** The repairs at the defaults (scenarios/agent-outage.ts, scenarios/unexplained-wave.ts), side by side with Istio. */
  readonly outage: OutageParams;
  /** The DaemonSet rollout on many nodes at once (scenarios/fleet-rollout.ts), side by side with Istio. */
  readonly fleet: FleetParams;
  /** Requests in flight while creating pods. */
  readonly concurrency: number;
  /** One extra, unmeasured run per controller at the largest size with a CPU profile and heap snapshot. */
  readonly profile: boolean;
  readonly outDir: string;
  readonly smoke: boolean;
  /**
   * BENCH_CANDIDATE_MAIN, BENCH_CANDIDATE_NODE_FLAGS and/or BENCH_CANDIDATE_ENV: a third controller, cni-repair as
   * changed; run as installed, like cni-repair, with these Node flags after the installed ones and these variables
   * (NAME=VALUE, space-separated) over the installed ones: e.g. an older build with the V8 flags it was installed
   * with (CNI_REPAIR_V8_FLAGS=...).
   */
  readonly candidate:
    | {
        readonly main: string | undefined;
        readonly nodeFlags: readonly string[];
        readonly env: Readonly<Record<string, string>>;
      }
    | undefined;
};

export type SideBySideParams = {
  /** Healthy pods on the one node every controller watches. */
  readonly pods: number;
  readonly rounds: number;
  /** Pause after sync (and after churn) before memory is read. */
  readonly settleMs: number;
  /** From that memory reading to the idle window: past the post-list garbage collections of every controller. */
  readonly idleDelaySeconds: number;
  readonly idleSeconds: number;
  /** Status writes on the node's pods for CPU per watch event, at `churnRate` per second. */
  readonly cpuEvents: number;
  readonly churnRate: number;
  /** Isolated repairs: this many pods broken one at a time, `isolatedGapMs` apart. */
  readonly isolatedPods: number;
  readonly isolatedGapMs: number;
  /** The burst: this many pods broken at `burstRate` per second. */
  readonly burstPods: number;
  readonly burstRate: number;
};

export type OutageParams = {
  /** Pods on one node broken during its CNI agent's outage; 0 skips it. */
  readonly pods: number;
  /** The outage across nodes: this many nodes (one process each per controller) of `nodePods` pods; 0 skips it. */
  readonly nodes: number;
  readonly nodePods: number;
  /** Pods broken at once on the side-by-side node, its agent Ready for an hour (nothing explains it); 0 skips it. */
  readonly unexplainedPods: number;
  /** Rounds of each of the three; 0 skips them all. */
  readonly rounds: number;
  /** How long a deleted pod takes to terminate (the fake kubelet's wait), so the in-flight caps bind. */
  readonly terminationMs: number;
};

export type FleetParams = {
  /** Nodes, one instance of each controller per node, all started at once; 0 skips the rollout. */
  readonly nodes: number;
  /** Healthy pods on each node. */
  readonly podsPerNode: number;
  readonly rounds: number;
  /** Before each run (the previous run's watches closed) and after the rollout (the lists' garbage collected). */
  readonly settleSeconds: number;
  /** The windows over which CPU at rest is read: before the rollout and after it. */
  readonly restSeconds: number;
};

const ISSUE_SIZES = [1_000, 10_000, 50_000, 100_000];

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name}=${raw}: want an integer >= ${min}`);
  return value;
}

export function readParams(env: NodeJS.ProcessEnv = process.env): BenchParams {
  const smoke = env.BENCH_SMOKE === "1";
  const pods = int(env, "BENCH_PODS", smoke ? 40 : 10_000, 1);
  // "none": no cluster-wide trials at all (a run of other scenarios only, e.g. make bench-fleet).
  const explicit = env.BENCH_SIZES === "none" ? [] : env.BENCH_SIZES?.split(",").map((s) => Number(s.trim()));
  if (explicit?.some((s) => !Number.isInteger(s) || s < 0))
    throw new Error(`BENCH_SIZES=${env.BENCH_SIZES}: want integers`);
  const sizes = [...new Set(explicit ?? [0, ...ISSUE_SIZES.filter((s) => s < pods), pods])].sort((a, b) => a - b);
  const cpuSeconds = int(env, "BENCH_CPU_SECONDS", smoke ? 3 : 20, 1);
  const latencyWindowSeconds = int(env, "BENCH_LATENCY_WINDOW", smoke ? 3 : 20, 1);
  const rounds = int(env, "BENCH_ROUNDS", smoke ? 1 : 3, 1);
  const sidePods = int(env, "BENCH_SIDE_PODS", smoke ? 30 : 1_000);
  return {
    pods: Math.max(0, ...sizes),
    sizes,
    rounds,
    churnRate: int(env, "BENCH_CHURN_RATE", smoke ? 20 : 50),
    cpuSeconds,
    latencyPods: int(env, "BENCH_LATENCY_PODS", smoke ? 5 : 50, 1),
    latencyWindowSeconds,
    churnSeconds: Math.max(int(env, "BENCH_CHURN_SECONDS", 0), cpuSeconds + latencyWindowSeconds),
    massPods: int(env, "BENCH_MASS_PODS", smoke ? 20 : 1_000),
    massLimitedSeconds: int(env, "BENCH_MASS_LIMITED_SECONDS", smoke ? 5 : 60),
    soakSeconds: int(env, "BENCH_SOAK_SECONDS", smoke ? 5 : 0),
    soakReplicas: int(env, "BENCH_SOAK_REPLICAS", rounds, 1),
    soakSampleSeconds: int(env, "BENCH_SOAK_SAMPLE_SECONDS", smoke ? 2 : 60, 1),
    perNodeRounds: int(env, "BENCH_PER_NODE_ROUNDS", rounds),
    side: {
      pods: sidePods,
      rounds: int(env, "BENCH_SIDE_ROUNDS", rounds),
      settleMs: smoke ? 500 : 2_000,
      idleDelaySeconds: int(env, "BENCH_SIDE_IDLE_DELAY_SECONDS", smoke ? 0 : 13),
      idleSeconds: int(env, "BENCH_SIDE_IDLE_SECONDS", smoke ? 1 : 10, 1),
      cpuEvents: int(env, "BENCH_SIDE_CPU_EVENTS", smoke ? 50 : 3_000, 1),
      churnRate: int(env, "BENCH_SIDE_CHURN_RATE", smoke ? 50 : 100, 1),
      isolatedPods: int(env, "BENCH_SIDE_ISOLATED_PODS", smoke ? 2 : 15, 1),
      isolatedGapMs: smoke ? 500 : 2_000,
      burstPods: int(env, "BENCH_SIDE_BURST_PODS", smoke ? 5 : 100, 1),
      burstRate: int(env, "BENCH_SIDE_BURST_RATE", 5, 1),
    },
    outage: readOutage(env, smoke, rounds, sidePods),
    fleet: {
      nodes: int(env, "BENCH_FLEET_NODES", smoke ? 4 : 100),
      podsPerNode: int(env, "BENCH_FLEET_NODE_PODS", smoke ? 3 : 30, 1),
      rounds: int(env, "BENCH_FLEET_ROUNDS", rounds),
      settleSeconds: int(env, "BENCH_FLEET_SETTLE_SECONDS", smoke ? 1 : 5),
      restSeconds: int(env, "BENCH_FLEET_REST_SECONDS", smoke ? 1 : 10, 1),
    },
    concurrency: int(env, "BENCH_CONCURRENCY", 32, 1),
    profile: env.BENCH_PROFILE === "1",
    outDir: env.BENCH_OUT ?? "bench/results",
    smoke,
    candidate:
      env.BENCH_CANDIDATE_MAIN || env.BENCH_CANDIDATE_NODE_FLAGS || env.BENCH_CANDIDATE_ENV
        ? {
            main: env.BENCH_CANDIDATE_MAIN || undefined,
            nodeFlags: (env.BENCH_CANDIDATE_NODE_FLAGS ?? "").split(" ").filter((flag) => flag !== ""),
            env: candidateEnv(env.BENCH_CANDIDATE_ENV ?? ""),
          }
        : undefined,
  };
}

/** BENCH_CANDIDATE_ENV's NAME=VALUE words; anything else is refused by name. */
function candidateEnv(text: string): Record<string, string> {
  const words = text.split(" ").filter((word) => word !== "");
  return Object.fromEntries(
    words.map((word) => {
      const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(word);
      if (!match) throw new Error(`BENCH_CANDIDATE_ENV: expected NAME=VALUE words, got ${JSON.stringify(word)}`);
      return [match[1], match[2]];
    }),
  );
}

function readOutage(env: NodeJS.ProcessEnv, smoke: boolean, rounds: number, sidePods: number): OutageParams {
  // Half the node's pods broken or more is a storm: cni-repair would rightly hold them all. Without healthy pods
  // on the node (BENCH_SIDE_PODS=0) the run is skipped unless asked for, then refused.
  const unexplainedPods = int(env, "BENCH_UNEXPLAINED_PODS", Math.min(smoke ? 5 : 110, sidePods));
  if (unexplainedPods > sidePods)
    throw new Error(
      `BENCH_UNEXPLAINED_PODS=${unexplainedPods} needs at least as many healthy pods on the node (BENCH_SIDE_PODS=${sidePods}) to stay under the storm threshold`,
    );
  return {
    pods: int(env, "BENCH_OUTAGE_PODS", smoke ? 0 : 110),
    nodes: int(env, "BENCH_OUTAGE_NODES", smoke ? 2 : 10),
    nodePods: int(env, "BENCH_OUTAGE_NODE_PODS", smoke ? 3 : 100, 1),
    unexplainedPods,
    rounds: int(env, "BENCH_OUTAGE_ROUNDS", rounds),
    terminationMs: int(env, "BENCH_OUTAGE_TERMINATION_MS", 1_000),
  };
}
