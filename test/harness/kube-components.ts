// The cluster components the e2e mode adds to a ControlPlane: kube-controller-manager, kube-scheduler and kwok.
// Each runs as its own process with the admin's kubeconfig (a static token in system:masters), logs to a file
// in the plane's directory, and dies with the test process.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ClusterBinaries } from "./cluster-binaries.js";
import type { ControlPlane } from "./control-plane.js";
import { ManagedProcess } from "./managed-process.js";
import { freePort } from "./ports.js";

/**
 * The controllers a workload needs to be recreated after a delete, and the ServiceAccount ones (each new
 * namespace gets its "default" ServiceAccount, so pods pass ServiceAccount admission). No garbage collector:
 * test fixtures own pods by made-up UIDs, which it would collect; no node lifecycle: kwok's nodes are healthy.
 */
const CONTROLLERS = [
  "deployment-controller",
  "replicaset-controller",
  "statefulset-controller",
  "job-controller",
  "serviceaccount-controller",
  "serviceaccount-token-controller",
];

/** Annotation kwok looks for on the Node objects it manages. */
export const KWOK_NODE_ANNOTATION = { key: "kwok.x-k8s.io/node", value: "fake" } as const;

/** The common flags: admin credentials, no serving port of their own, no leader election, quiet logs. */
function clientFlags(plane: ControlPlane): string[] {
  return [
    `--kubeconfig=${plane.kubeconfigPath}`,
    `--authentication-kubeconfig=${plane.kubeconfigPath}`,
    `--authorization-kubeconfig=${plane.kubeconfigPath}`,
    "--leader-elect=false",
    "--secure-port=0",
    // Recreating a wave of pods at once should not wait on the client-side rate limit.
    "--kube-api-qps=200",
    "--kube-api-burst=400",
    "--v=1",
  ];
}

/**
 * `extraControllers`: more of kube-controller-manager's controllers, e.g. for a real node the node lifecycle (lifts
 * the not-ready taint once the kubelet reports Ready) and the DaemonSet controller.
 */
export function startControllerManager(
  plane: ControlPlane,
  binaries: Pick<ClusterBinaries, "kubeControllerManager">,
  extraControllers: readonly string[] = [],
): ManagedProcess {
  return new ManagedProcess(
    "kube-controller-manager",
    binaries.kubeControllerManager,
    [
      ...clientFlags(plane),
      `--controllers=${[...CONTROLLERS, ...extraControllers].join(",")}`,
      `--service-account-private-key-file=${plane.serviceAccountKeyFile}`,
      `--root-ca-file=${plane.servingCertFiles.cert}`,
      "--use-service-account-credentials=false",
      // A pod a ReplicaSet lost is replaced at once; the default sync periods are fine otherwise.
      "--concurrent-replicaset-syncs=10",
      "--concurrent-statefulset-syncs=10",
    ],
    join(plane.dir, "kube-controller-manager.log"),
  );
}

export function startScheduler(plane: ControlPlane, binaries: Pick<ClusterBinaries, "kubeScheduler">): ManagedProcess {
  return new ManagedProcess(
    "kube-scheduler",
    binaries.kubeScheduler,
    clientFlags(plane),
    join(plane.dir, "kube-scheduler.log"),
  );
}

/** kwok, managing the Nodes that carry its annotation, with the stages in test/controlplane/kwok/stages.yaml. */
export async function startKwok(plane: ControlPlane, binaries: ClusterBinaries): Promise<ManagedProcess> {
  const serverPort = await freePort();
  return new ManagedProcess(
    "kwok",
    binaries.kwok,
    [
      `--kubeconfig=${plane.kubeconfigPath}`,
      `--config=${kwokStagesFile()}`,
      `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION.key}=${KWOK_NODE_ANNOTATION.value}`,
      // Addresses are only written into Node and Pod status; nothing ever connects to them.
      "--node-ip=127.0.0.1",
      "--cidr=127.64.0.0/16",
      `--server-address=127.0.0.1:${serverPort}`,
      "--node-lease-duration-seconds=40",
    ],
    join(plane.dir, "kwok.log"),
  );
}

/** test/controlplane/kwok/stages.yaml, found from the compiled location (dist/test/harness) or the source one. */
function kwokStagesFile(): string {
  let dir = fileURLToPath(new URL(".", import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = join(dir, "test", "controlplane", "kwok", "stages.yaml");
    if (existsSync(candidate)) return candidate;
    dir = join(dir, "..");
  }
  throw new Error("cannot find test/controlplane/kwok/stages.yaml above the test harness");
}
