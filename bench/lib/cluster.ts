// Starts the test control plane for benchmarks: audit only the victims' pod writes, room for bulk requests.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ControlPlane } from "../../test/harness/control-plane.js";
import type { ClusterAccess } from "./kube-client.js";
import { VICTIM_NAMESPACES } from "./victims.js";

// Only victim pods (the ones turned broken) are audited: their status writes and deletes.
// Metadata level is enough: stageTimestamp of ResponseComplete is when the server accepted each write.
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
  - level: Metadata
    namespaces: ${JSON.stringify(VICTIM_NAMESPACES)}
    resources: [{ group: "", resources: ["pods", "pods/status"] }]
    verbs: ["patch", "delete"]
  - level: None
`;

export type BenchCluster = {
  readonly plane: ControlPlane;
  readonly access: ClusterAccess;
  stop(): Promise<void>;
};

export async function startBenchCluster(): Promise<BenchCluster> {
  const dir = mkdtempSync(join(tmpdir(), "cni-repair-bench-"));
  const policy = join(dir, "audit-policy.yaml");
  writeFileSync(policy, AUDIT_POLICY);
  // kube-apiserver takes the last value of a repeated flag, so this policy replaces the harness's own.
  const plane = await ControlPlane.start({
    apiServerArgs: [
      `--audit-policy-file=${policy}`,
      "--max-requests-inflight=1000",
      "--max-mutating-requests-inflight=500",
    ],
    startTimeoutMs: 180_000,
  });
  return {
    plane,
    access: { server: plane.server, caPem: plane.caPem, token: plane.adminToken },
    async stop() {
      await plane.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
