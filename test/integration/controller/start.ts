// Per-test fixture for controller tests: a fresh namespace, an admin client, and controllers scoped to that
// namespace (so tests never act on each other's pods), always stopped afterwards with exit code 0 checked.
import { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { ControllerProcess } from "../../harness/controller-process.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { controlPlane } from "../../harness/shared-control-plane.js";

/**
 * Guards that need more than one namespace's worth of setup are off unless a test turns them on: no Lease
 * election (tests run one controller at a time) and no CNI agent gate (tests that want it create agent pods).
 */
// No election, no agent gate, and no reading of Istio's repair settings: these tests are about other things (the
// tests beside Istio's repair are test/integration/safety/istio-repair.test.ts), and with the gate off an istio
// pod would wait for evidence of Istio's repair that never comes when the settings cannot be read.
export const PLAIN = ["--leader-elect=false", "--cni-agent-gate=off", "--istio-repair=ignore"] as const;

export async function startControllerFor(namespace: string, args: readonly string[] = []): Promise<ControllerProcess> {
  return await ControllerProcess.start({
    args: [
      `--kubeconfig=${controlPlane().kubeconfigPath}`,
      `--field-selector=metadata.namespace=${namespace}`,
      ...PLAIN,
      ...args,
    ],
  });
}

export type ControllerTest = {
  readonly api: CoreV1Api;
  readonly namespace: string;
  /** The controller started last in this test. */
  readonly controller: ControllerProcess;
  /** Starts a controller scoped to the namespace; later flags override PLAIN. */
  start(args?: readonly string[]): Promise<ControllerProcess>;
  /** Takes over a controller started another way (other credentials, behind a proxy) for the cleanup. */
  adopt(controller: ControllerProcess): ControllerProcess;
  /** A metric of the last controller (0 when none runs). */
  metric(name: string, labels?: Record<string, string>): Promise<number>;
};

/** Registers the mocha hooks and returns the fixture the tests of this describe block use. */
export function controllerTest(): ControllerTest {
  let api: CoreV1Api | undefined;
  let namespace = "";
  let started: ControllerProcess[] = [];
  const fixture: ControllerTest = {
    get api() {
      if (!api) throw new Error("controllerTest: no test is running");
      return api;
    },
    get namespace() {
      return namespace;
    },
    get controller() {
      const last = started.at(-1);
      if (!last) throw new Error("controllerTest: no controller started in this test");
      return last;
    },
    start: async (args = []) => fixture.adopt(await startControllerFor(namespace, args)),
    adopt: (controller) => {
      started.push(controller);
      return controller;
    },
    metric: async (name, labels = {}) => (await started.at(-1)?.metric(name, labels)) ?? 0,
  };
  beforeEach(async () => {
    api = controlPlane().kubeConfig().makeApiClient(CoreV1Api);
    namespace = await createTestNamespace(api);
  });
  afterEach(async function () {
    const controllers = started;
    started = [];
    // Every one stopped before any is judged: a failed check must not leave the rest running.
    const codes = await Promise.all(controllers.map((controller) => controller.stop()));
    const failed = this.currentTest?.state === "failed" || codes.some((code) => code !== 0);
    if (failed) for (const controller of controllers) console.log(controller.output());
    for (const code of codes) expect(code, "controller exit code").to.equal(0);
  });
  return fixture;
}
