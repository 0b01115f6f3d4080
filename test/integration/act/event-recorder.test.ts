// Events are written in the background: a repair never waits for its Event, a slow or failing Events API costs
// no repair, and shutdown can wait for what is queued.
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { expect } from "chai";
import { EventRecorder } from "../../../src/act/event-recorder.js";
import type { PodEvent } from "../../../src/kube/events-api.js";
import { KubeConfigCredentials } from "../../../src/kube/kubeconfig-credentials.js";
import { KubeTransport } from "../../../src/kube/transport.js";
import { kubeconfigVia } from "../../harness/e2e-controller.js";
import { HttpFaultProxy, pauseViolations } from "../../harness/http-fault-proxy.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { collectingLogger } from "../../support/loggers.js";

/** Events go out through two writers (a literal: a count changed by mistake must fail here): while one waits out a
 * Retry-After, the other may still be in flight. */
const OTHER_WRITERS = 1;

describe("event recorder", () => {
  let api: CoreV1Api;
  let namespace: string;
  let proxy: HttpFaultProxy;
  let transport: KubeTransport;
  let failures: number;
  let warnings: string[];
  let recorder: EventRecorder;

  beforeEach(async () => {
    const plane = controlPlane();
    api = plane.kubeConfig().makeApiClient(CoreV1Api);
    namespace = await createTestNamespace(api);
    proxy = await HttpFaultProxy.start(plane.apiServerAddress, plane.servingCertFiles);
    const viaProxy = new KubeConfig();
    viaProxy.loadFromFile(kubeconfigVia(plane, proxy.port, "events"));
    transport = new KubeTransport(new KubeConfigCredentials(viaProxy), { userAgent: "cni-repair/test" });
    failures = 0;
    const collected = collectingLogger({ level: "warn" });
    warnings = collected.lines;
    const logger = collected.logger;
    recorder = new EventRecorder(transport, logger, () => failures++);
  });

  afterEach(async () => {
    await transport.close();
    await proxy.close();
  });

  const event = (pod: string, reason = "BrokenPodDeleted"): PodEvent => ({
    pod: { namespace, name: pod, uid: `uid-${pod}` },
    type: "Normal",
    reason,
    action: "Delete",
    note: `test event for ${pod}`,
  });

  const eventsOf = async (pod: string): Promise<string[]> =>
    (await api.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${pod}` })).items.map(
      (item) => item.reason ?? "",
    );

  it("returns before the write is answered, and drain() waits for it", async () => {
    proxy.setRule((request) => ({ kind: "pass", delayMs: request.method === "POST" ? 1_500 : 0 }));
    const started = performance.now();
    recorder.post(event("slow"));
    expect(performance.now() - started).to.be.below(100);
    expect(recorder.backlog).to.equal(1);
    expect(await eventsOf("slow")).to.deep.equal([]);

    await recorder.drain();
    expect(recorder.backlog).to.equal(0);
    expect(await eventsOf("slow")).to.deep.equal(["BrokenPodDeleted"]);
    expect(failures).to.equal(0);
  });

  it("writes one Event per pod and reason however often it is posted", async () => {
    for (let i = 0; i < 5; i++) {
      recorder.post(event("once"));
      recorder.post(event("once", "BrokenPodHeld"), "BrokenPodHeld/rate_limit");
      recorder.post(event("once", "BrokenPodHeld"), "BrokenPodHeld/rate_limit");
    }
    await recorder.drain();
    expect((await eventsOf("once")).sort()).to.deep.equal(["BrokenPodDeleted", "BrokenPodHeld"]);
  });

  it("counts a failed write, warns naming the pod, and writes it on the next post", async () => {
    proxy.setRule(() => ({ kind: "fail", code: 500 }));
    recorder.post(event("flaky"));
    await recorder.drain();
    expect(failures).to.equal(1);
    expect(warnings.join("")).to.contain("could not record event").and.contain('"pod":"flaky"');
    expect(await eventsOf("flaky")).to.deep.equal([]);

    proxy.setRule(() => ({ kind: "pass" }));
    recorder.post(event("flaky"));
    await recorder.drain();
    expect(await eventsOf("flaky")).to.deep.equal(["BrokenPodDeleted"]);
  });

  it("drops and counts Events beyond its backlog instead of growing without bound", async () => {
    proxy.setRule(() => ({ kind: "fail", code: 500 }));
    // Posting is synchronous: 2 writes start, 1,000 wait, the rest are dropped at once.
    for (let i = 0; i < 1_010; i++) recorder.post(event(`pod-${i}`));
    expect(recorder.backlog).to.equal(1_002);
    expect(failures).to.equal(8);
    expect(warnings.filter((line) => line.includes("dropped"))).to.have.length(8);
    await recorder.drain();
    expect(failures).to.equal(1_010);
  });

  it("pauses every writer for Retry-After on 429, and writes every Event in the end", async function () {
    this.timeout(60_000);
    const throttledFor = Date.now() + 3_000;
    proxy.setRule((request) =>
      request.method === "POST" && Date.now() < throttledFor
        ? { kind: "fail", code: 429, retryAfterSeconds: 1 }
        : { kind: "pass" },
    );
    const pods = Array.from({ length: 20 }, (_, i) => `busy-${i}`);
    for (const pod of pods) recorder.post(event(pod));
    await recorder.drain();

    expect(failures).to.equal(0);
    const written = (await api.listNamespacedEvent({ namespace })).items.map((item) => item.involvedObject.name);
    expect(written.sort()).to.deep.equal([...pods].sort());
    const posts = proxy.log.filter((entry) => entry.method === "POST");
    expect(posts.filter((entry) => entry.status === 429).length).to.be.greaterThan(1);
    expect(pauseViolations(posts, OTHER_WRITERS)).to.deep.equal([]);
  });

  it("stopRetrying() ends a Retry-After wait at once: the Event counts as failed, drain() resolves", async () => {
    proxy.setRule(() => ({ kind: "fail", code: 429, retryAfterSeconds: 600 }));
    recorder.post(event("stuck"));
    await waitFor("the first 429", () => proxy.log.some((entry) => entry.status === 429));
    recorder.stopRetrying();
    await recorder.drain();
    expect(failures).to.equal(1);
    expect(warnings.join("")).to.contain("could not record event").and.contain('"pod":"stuck"');
  });
});
