// What every scenario gets: the cluster, the bench's clients by role, the fake kubelet, parameters, output.
import type { BenchCluster } from "../lib/cluster.js";
import type { Candidate, ControllerKind, OurFlags } from "../lib/controllers.js";
import type { FakeKubelet } from "../lib/fake-kubelet.js";
import type { BenchClient } from "../lib/kube-client.js";
import type { BenchParams } from "../params.js";

export type BenchContext = {
  readonly cluster: BenchCluster;
  /** The baseline's and the floor's access; cni-repair runs in cluster instead (inClusterEnv). */
  readonly kubeconfig: string;
  /** cni-repair's environment as a pod of the installed workload (lib/in-cluster.ts). */
  readonly inClusterEnv: Record<string, string>;
  /** Creates and cleans up pods (user agent bench-setup). */
  readonly setup: BenchClient;
  /** Writes the broken statuses (user agent bench-break, which the audit reader looks for). */
  readonly breaker: BenchClient;
  /** Background churn (user agent bench-churn). */
  readonly churner: BenchClient;
  readonly kubelet: FakeKubelet;
  readonly params: BenchParams;
  readonly ourFlags: OurFlags;
  /** The controllers compared, cni-repair first. */
  readonly kinds: readonly ControllerKind[];
  readonly candidate: Candidate | undefined;
  /** Istio's repair controller binary, when built (lib/istio-repair.ts); the side-by-side runs add it. */
  readonly istioRepair: string | undefined;
  readonly resultsDir: string;
  progress(line: string): void;
  /** A fresh victim batch name, unique in the run. */
  batchName(): string;
};
