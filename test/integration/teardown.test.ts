// Proves an interrupted run leaves no etcd or kube-apiserver behind, and that stop() cleans up fully.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { ControlPlane } from "../harness/control-plane.js";
import { isAlive, removeAbandonedDirs } from "../harness/owned-dirs.js";
import { waitFor } from "../harness/wait.js";

const withControlPlane = join(dirname(fileURLToPath(import.meta.url)), "..", "harness", "with-control-plane.js");

describe("test control plane teardown", () => {
  it("stop() ends both servers and removes the directory", async function () {
    this.timeout(120_000);
    const plane = await ControlPlane.start();
    const pids = plane.pids;
    expect(pids).to.have.length(2);
    await plane.stop();
    expect(pids.filter(isAlive)).to.deep.equal([]);
    expect(existsSync(plane.dir)).to.equal(false);
  });

  it("servers die with a SIGKILLed owner, and the next start removes the abandoned directory", async function () {
    this.timeout(120_000);
    const child = spawn(process.execPath, [withControlPlane], { stdio: ["ignore", "pipe", "inherit"] });
    const firstLine = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once("line", resolve);
      child.once("exit", (code) => reject(new Error(`with-control-plane exited early with ${code}`)));
    });
    const started = JSON.parse(firstLine) as { kubeconfig: string; pids: number[] };
    expect(started.pids.filter(isAlive)).to.have.length(2);

    child.kill("SIGKILL");
    await waitFor("the servers to die with their owner", () => started.pids.every((pid) => !isAlive(pid)));
    const abandonedDir = dirname(started.kubeconfig);
    expect(existsSync(abandonedDir)).to.equal(true);
    removeAbandonedDirs("cni-repair-cp-");
    expect(existsSync(abandonedDir)).to.equal(false);
  });
});
