// Each overlay's controller does its job with nothing but the permissions its manifests grant: installed with
// server-side apply, run "in-cluster" with a TokenRequest token of its ServiceAccount and the args and env of its
// rendered workload (test/harness/mode-scenarios.ts says what each mode must do).
import { CoreV1Api } from "@kubernetes/client-node";
import { inClusterRuns, runModeScenario } from "../../harness/mode-scenarios.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { controllerContainer, installOverlay, OVERLAYS, uninstall } from "../../harness/overlays.js";
import { controlPlane } from "../../harness/shared-control-plane.js";

const JOBS = {
  cluster: "elects a leader, deletes the broken pod, labels the bare one",
  "label-only": "labels the broken pod through pods/status and deletes nothing",
  "dry-run": "reports the broken pod with a dry-run delete and changes nothing",
  "per-node": "repairs only its node's pods, elects nothing",
} as const;

describe("manifests: each overlay's controller in-cluster, with only its own permissions", () => {
  const runs = inClusterRuns();

  after(async () => {
    await uninstall(controlPlane());
  });

  for (const overlay of OVERLAYS) {
    it(`${overlay}: ${JOBS[overlay]}; nothing is refused`, async () => {
      const plane = controlPlane();
      const namespace = await createTestNamespace(plane.kubeConfig().makeApiClient(CoreV1Api), "m");
      const { rendered } = await installOverlay(plane, overlay);
      await runModeScenario(overlay, {
        plane,
        namespace,
        start: async (nodeName, podName) => {
          const run = await runs.start(plane, controllerContainer(rendered), { nodeName, podName }, namespace);
          return run.controller;
        },
      });
    });
  }
});
