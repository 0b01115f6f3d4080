// Mocha fixture for the whole-cluster suites: one e2e cluster per describe block, and per test the controllers
// and proxies it started, stopped afterwards (logs printed on failure, a clean exit checked where expected).
import { expect } from "chai";
import type { ControllerProcess } from "./controller-process.js";
import { E2eCluster } from "./e2e-cluster.js";

export type E2eSuite = {
  readonly cluster: E2eCluster;
  /** Stops the controller after the test; checks it exits 0 on SIGTERM unless the test kills it on purpose. */
  track(controller: ControllerProcess, options?: { checkExit?: boolean }): ControllerProcess;
  /** Closes the resource (a proxy) after the test. */
  closeAfter<T extends { close(): Promise<void> }>(resource: T): T;
};

/** Registers the hooks in the calling describe block (give it a generous timeout: the first run builds kwok). */
export function e2eSuite(): E2eSuite {
  let cluster: E2eCluster | undefined;
  let controllers: { controller: ControllerProcess; checkExit: boolean }[] = [];
  let closables: { close(): Promise<void> }[] = [];
  before(async () => {
    cluster = await E2eCluster.start();
  });
  after(async function () {
    this.timeout(60_000);
    await cluster?.stop();
  });
  afterEach(async function () {
    const stopping = controllers;
    const closing = closables;
    controllers = [];
    closables = [];
    if (this.currentTest?.state === "failed") {
      for (const { controller } of stopping) console.log(controller.output());
      console.log(cluster?.logTails());
    }
    const codes = [];
    for (const { controller, checkExit } of stopping) {
      const code = await controller.stop();
      if (checkExit) codes.push(code);
    }
    for (const resource of closing) await resource.close();
    for (const code of codes) expect(code, "cni-repair exit code on SIGTERM").to.equal(0);
  });
  return {
    get cluster() {
      if (!cluster) throw new Error("e2eSuite: the cluster has not started");
      return cluster;
    },
    track: (controller, options = {}) => {
      controllers.push({ controller, checkExit: options.checkExit ?? true });
      return controller;
    },
    closeAfter: (resource) => {
      closables.push(resource);
      return resource;
    },
  };
}
