// Run as its own process by the real-node cleanup test: starts a control plane and a real node, runs a pod on
// it, prints the node's directory once the pod's app container runs, then waits to be killed (SIGKILL: a crash,
// so nothing of its own cleanup runs; its kubelet and containerd die with it, the shims and containers do not).
import { CoreV1Api } from "@kubernetes/client-node";
import { ControlPlane } from "../control-plane.js";
import { startPinnedPod } from "./pinned-pod.js";
import { RealNode } from "./real-node.js";

const plane = await ControlPlane.start();
const node = await RealNode.start(plane);
node.setMeshAgentReady(true);
const api = plane.kubeConfig().makeApiClient(CoreV1Api);
await startPinnedPod(api, node, "survivor", "app-running");
process.stdout.write(`${JSON.stringify({ dir: node.layout.dir })}\n`);
setInterval(() => undefined, 60_000);
