// The harness's start() when a controller never gets ready: the failure carries the controller's log (the one clue
// why), and the process is stopped (left running, it would act in later tests' namespaces).
import { createServer, type Server, type Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "chai";
import { ControllerNotReady, ControllerProcess } from "../../harness/controller-process.js";
import { kubeconfigVia } from "../../harness/e2e-controller.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { PLAIN } from "./start.js";

describe("harness: a controller that never gets ready", () => {
  let blackHole: Server;
  const sockets = new Set<Socket>();

  before(async () => {
    // Accepts connections and never says a word: the controller's first request waits, so it is never ready.
    blackHole = createServer((socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => blackHole.listen(0, "127.0.0.1", resolve));
  });

  after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => blackHole.close(resolve));
  });

  it("fails naming what it waited for, with the controller's log, and the controller has exited", async () => {
    const address = blackHole.address();
    if (address === null || typeof address === "string") throw new Error("the black hole has no port");
    const kubeconfig = kubeconfigVia(controlPlane(), address.port, "black-hole");
    let failure: unknown;
    try {
      await ControllerProcess.start({ args: [`--kubeconfig=${kubeconfig}`, ...PLAIN], readyTimeoutMs: 3_000 });
    } catch (error) {
      failure = error;
    }
    expect(failure).to.be.instanceOf(ControllerNotReady);
    const notReady = failure as ControllerNotReady;
    expect(notReady.message).to.match(/^timed out after 3000 ms waiting for the controller to be ready/);
    expect(notReady.message).to.include('"msg":"starting cni-repair"');
    expect(notReady.controller.logsWith("starting cni-repair")).to.have.length(1);
    // Stopped before start() threw: its exit has already happened.
    const gone = await Promise.race([notReady.controller.exited.then(() => true), sleep(100).then(() => false)]);
    expect(gone, "the controller has exited").to.equal(true);
  });
});
