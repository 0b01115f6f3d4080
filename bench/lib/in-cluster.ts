// cni-repair in the bench runs as the manifests install it: in cluster, from a pod's service-account files (token,
// CA, namespace) and KUBERNETES_SERVICE_HOST/PORT, never a kubeconfig (which loads @kubernetes/client-node: about
// 40 MB more RSS and 20 MB more heap than the installed Deployment or DaemonSet carries).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BenchCluster } from "./cluster.js";

/** What a pod in `namespace` sees of its service account (under CNI_REPAIR_IN_CLUSTER_ROOT), with the bench's token. */
export function inClusterEnvironment(
  cluster: BenchCluster,
  namespace: string,
): { env: Record<string, string>; cleanup(): void } {
  const root = mkdtempSync(join(tmpdir(), "cni-repair-bench-in-cluster-"));
  const secrets = join(root, "var/run/secrets/kubernetes.io/serviceaccount");
  mkdirSync(secrets, { recursive: true });
  writeFileSync(join(secrets, "token"), cluster.access.token);
  writeFileSync(join(secrets, "ca.crt"), cluster.access.caPem);
  writeFileSync(join(secrets, "namespace"), namespace);
  const home = join(root, "home");
  mkdirSync(home);
  const server = new URL(cluster.access.server);
  return {
    env: {
      KUBERNETES_SERVICE_HOST: server.hostname,
      KUBERNETES_SERVICE_PORT: server.port,
      CNI_REPAIR_IN_CLUSTER_ROOT: root,
      HOME: home,
      POD_NAMESPACE: namespace,
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}
