// A real node leaves nothing behind: not after stop() (also in a PID and mount namespace of its own), and not after
// its test process was killed with a pod running (the shims and containers outlive containerd and the kubelet
// then), once the next start cleans up.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { ControlPlane } from "../../harness/control-plane.js";
import { cleanUpAbandonedNodes, nodeLeftovers } from "../../harness/real-node/node-cleanup.js";
import { NodeLayout } from "../../harness/real-node/node-layout.js";
import { startPinnedPod } from "../../harness/real-node/pinned-pod.js";
import { RealNode } from "../../harness/real-node/real-node.js";

const NOTHING = { processes: [], mounts: [], cgroups: [], links: [], shimSockets: [], dir: false };
const CHILD = fileURLToPath(new URL("../../harness/real-node/crash-child.js", import.meta.url));

/** A running node has all of these: the test can tell cleaned from never created. */
function expectRunningNode(layout: NodeLayout): void {
  const now = nodeLeftovers(layout);
  expect(now.processes.length, "processes").to.be.greaterThan(2);
  expect(now.mounts.length, "mounts").to.be.greaterThan(0);
  expect(now.cgroups.length, "cgroups").to.be.greaterThan(0);
  expect(now.links, "links").to.include(layout.bridge);
  expect(now.dir, "directory").to.equal(true);
}

describe("e2e on a real node: cleanup", function () {
  this.timeout(10 * 60_000);

  it("stop() removes the processes, mounts, cgroups, bridge and directory of a node running a pod", async () => {
    const plane = await ControlPlane.start();
    try {
      const node = await RealNode.start(plane);
      const api = plane.kubeConfig().makeApiClient(CoreV1Api);
      await startPinnedPod(api, node, "app", "validator-ran");
      expectRunningNode(node.layout);
      await node.stop();
      expect(nodeLeftovers(node.layout)).to.deep.equal(NOTHING);
    } finally {
      await plane.stop();
    }
  });

  it("a node in its own PID and mount namespace (ownPidNamespace): its mounts stay inside it, and stop() removes everything", async () => {
    const plane = await ControlPlane.start();
    try {
      const node = await RealNode.start(plane, { ownPidNamespace: true });
      const api = plane.kubeConfig().makeApiClient(CoreV1Api);
      await startPinnedPod(api, node, "app", "validator-ran");
      const now = nodeLeftovers(node.layout);
      expect(now.processes.length, "processes").to.be.greaterThan(2);
      expect(now.mounts, "mounts seen from the machine").to.deep.equal([]);
      expect(now.cgroups.length, "cgroups").to.be.greaterThan(0);
      expect(now.links, "links").to.include(node.layout.bridge);
      await node.stop();
      expect(nodeLeftovers(node.layout)).to.deep.equal(NOTHING);
    } finally {
      await plane.stop();
    }
  });

  it("after its test process is killed with a pod running, the next start's cleanup removes everything", async () => {
    const child = spawn(process.execPath, [CHILD], { stdio: ["ignore", "pipe", "inherit"] });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    const layout = await new Promise<NodeLayout>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        const line = out.split("\n").find((l) => l.startsWith("{"));
        if (line) resolve(new NodeLayout((JSON.parse(line) as { dir: string }).dir));
      });
      child.once("exit", (code) => reject(new Error(`the child exited ${code} before its pod ran`)));
    });
    expectRunningNode(layout);
    child.kill("SIGKILL");
    await exited;
    // The crash left the pod's shim and containers running, with their mounts.
    const left = nodeLeftovers(layout);
    expect(left.processes.length, "processes surviving the crash").to.be.greaterThan(0);
    expect(left.mounts.length, "mounts surviving the crash").to.be.greaterThan(0);

    cleanUpAbandonedNodes();
    expect(nodeLeftovers(layout)).to.deep.equal(NOTHING);
  });
});
