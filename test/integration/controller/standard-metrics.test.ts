// The ecosystem's standard controller metrics behave as in client-go and controller-runtime, on a real API server:
// workqueue depth rises while keys wait for the one worker and is 0 once all is done; adds and queue durations
// are counted per hand-out; every failed DELETE is a retry and a reconcile with result="error".
import { expect } from "chai";
import { controllerDeletes } from "../../harness/audit-log.js";
import { createPodInState } from "../../harness/broken-pods.js";
import { ControllerProcess } from "../../harness/controller-process.js";
import { kubeconfigVia } from "../../harness/e2e-controller.js";
import { HttpFaultProxy, requestKey } from "../../harness/http-fault-proxy.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { controllerTest, PLAIN } from "./start.js";

const PODS = 3;
/** Each pod's first DELETE fails with 500; the next one is held this long before it reaches the API server. */
const HELD_MS = 1_500;
const QUEUE = { name: "cni-repair" };
const CONTROLLER = { controller: "cni-repair" };

describe("standard controller metrics (client-go workqueue, controller-runtime reconcile)", () => {
  const t = controllerTest();
  const proxies: HttpFaultProxy[] = [];
  afterEach(async () => {
    for (const proxy of proxies.splice(0)) await proxy.close();
  });

  it("counts depth, adds, queue duration and retries as client-go does, and reconciles by result", async function () {
    this.timeout(120_000);
    const { api, namespace } = t;
    const names = Array.from({ length: PODS }, (_, i) => `metered-${i}`);
    for (const name of names) await createPodInState(api, { namespace, name, owner: { kind: "ReplicaSet", name } });
    const proxy = await HttpFaultProxy.start(controlPlane().apiServerAddress, controlPlane().servingCertFiles);
    proxies.push(proxy);
    const seen = new Set<string>();
    proxy.setRule((request) => {
      if (request.method !== "DELETE") return { kind: "pass" };
      const key = requestKey(request);
      if (seen.has(key)) return { kind: "pass", delayMs: HELD_MS };
      seen.add(key);
      return { kind: "fail", code: 500 };
    });
    // One worker, so keys wait in the queue while it is busy; nothing but the faults between deletes.
    const flags = [
      "--workers=1",
      "--max-deletions-per-minute=0",
      "--max-broken-fraction=1",
      "--retry-base-delay=100ms",
    ];
    const kubeconfig = kubeconfigVia(controlPlane(), proxy.port, "metered");
    const scope = `--field-selector=metadata.namespace=${namespace}`;
    const controller = t.adopt(
      await ControllerProcess.start({ args: [`--kubeconfig=${kubeconfig}`, scope, ...PLAIN, ...flags] }),
    );
    const metric = (name: string, labels: Record<string, string> = QUEUE) => controller.metric(name, labels);

    // While the one worker waits on a held DELETE, the other keys are due and wait in the queue.
    await waitFor("keys waiting in the queue", async () => (await metric("workqueue_depth")) >= 1, {
      timeoutMs: 30_000,
      intervalMs: 20,
    });
    const deleted = () =>
      controllerDeletes(controlPlane().auditLogPath, namespace).filter((event) => event.responseStatus?.code === 200);
    await waitFor("every pod deleted", () => deleted().length === PODS, { timeoutMs: 60_000 });
    await waitFor("the queue empty again", async () => (await metric("workqueue_depth")) === 0);

    // Every failed DELETE went back on the queue with backoff: a retry, and a reconcile ending in an error.
    const failed = proxy.log.filter((entry) => entry.method === "DELETE" && entry.status === 500);
    expect(failed).to.have.length(PODS);
    expect(await metric("workqueue_retries_total")).to.be.at.least(PODS);
    expect(await metric("controller_runtime_reconcile_total", { ...CONTROLLER, result: "error" })).to.equal(PODS);
    expect(await metric("controller_runtime_reconcile_errors_total", CONTROLLER)).to.equal(PODS);
    expect(await metric("controller_runtime_reconcile_total", { ...CONTROLLER, result: "success" })).to.be.at.least(
      PODS,
    );
    // Each key was added at the initial list and again when its retry came due; each hand-out observed how long
    // the key waited, each finished piece of work how long it took, and each was one reconcile. Read until a
    // snapshot is still (a watch event may add a key between two reads).
    const counts = async () => {
      const reconciles = await Promise.all(
        ["success", "error", "requeue", "requeue_after"].map((result) =>
          metric("controller_runtime_reconcile_total", { ...CONTROLLER, result }),
        ),
      );
      return {
        adds: await metric("workqueue_adds_total"),
        handedOut: await metric("workqueue_queue_duration_seconds_count"),
        worked: await metric("workqueue_work_duration_seconds_count"),
        reconciles: reconciles.reduce((sum, count) => sum + count, 0),
        timed: await metric("controller_runtime_reconcile_time_seconds_count", CONTROLLER),
      };
    };
    const settled = await waitFor("adds, hand-outs, work and reconciles to agree", async () => {
      const c = await counts();
      return c.adds === c.handedOut && c.handedOut === c.worked && c.worked === c.reconciles && c.reconciles === c.timed
        ? c
        : undefined;
    });
    expect(settled.adds).to.be.at.least(2 * PODS);
    const handedOut = settled.handedOut;
    // Queue duration is time spent waiting for the worker: keys behind a held DELETE waited over a second.
    const underOneSecond = await metric("workqueue_queue_duration_seconds_bucket", { ...QUEUE, le: "1" });
    expect(underOneSecond).to.be.below(handedOut);
    expect(await metric("workqueue_unfinished_work_seconds")).to.equal(0);
    expect(await metric("workqueue_longest_running_processor_seconds")).to.equal(0);
  });
});
