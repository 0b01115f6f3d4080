// Throttling is not failure: DELETEs and Event writes answered 429 with Retry-After (as API Priority and Fairness
// does) are counted result="throttled", retried no sooner than asked, and every repair and Event goes through.
import { expect } from "chai";
import { controllerDeletes } from "../../harness/audit-log.js";
import { createPodInState, repairEvents } from "../../harness/broken-pods.js";
import { ControllerProcess } from "../../harness/controller-process.js";
import { kubeconfigVia } from "../../harness/e2e-controller.js";
import {
  HttpFaultProxy,
  type LoggedRequest,
  pauseViolations,
  requestKey,
  retryAfterReport,
} from "../../harness/http-fault-proxy.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { controllerTest, PLAIN } from "./start.js";

/** Events go out through two writers (a literal: a count changed by mistake must fail here): while one waits out a
 * Retry-After, the other may still be in flight. */
const OTHER_WRITERS = 1;

const PODS = 6;
/** Each pod's DELETE is answered 429 this many times before it is let through. */
const THROTTLES_PER_DELETE = 2;
/** Event writes answered 429 before they are let through. */
const EVENT_THROTTLES = 8;
const RETRY_AFTER_SECONDS = 2;

describe("controller under API throttling (429 with Retry-After)", () => {
  const t = controllerTest();
  let proxy: HttpFaultProxy;

  beforeEach(async () => {
    proxy = await HttpFaultProxy.start(controlPlane().apiServerAddress, controlPlane().servingCertFiles);
  });

  afterEach(async () => {
    await proxy.close();
  });

  it("DELETE and Event writes: throttled, not failed; retried after Retry-After; every pod and Event done", async function () {
    this.timeout(120_000);
    const { api, namespace } = t;
    const names = Array.from({ length: PODS }, (_, i) => `throttled-${i}`);
    for (const name of names) await createPodInState(api, { namespace, name, owner: { kind: "ReplicaSet", name } });

    const answered = new Map<string, number>();
    let eventThrottles = 0;
    const throttle = { kind: "fail", code: 429, retryAfterSeconds: RETRY_AFTER_SECONDS } as const;
    proxy.setRule((request) => {
      if (request.method === "DELETE") {
        const key = requestKey(request);
        const seen = answered.get(key) ?? 0;
        answered.set(key, seen + 1);
        return seen < THROTTLES_PER_DELETE ? throttle : { kind: "pass" };
      }
      if (
        request.method === "POST" &&
        request.url.includes("/apis/events.k8s.io/") &&
        eventThrottles < EVENT_THROTTLES
      ) {
        eventThrottles++;
        return throttle;
      }
      return { kind: "pass" };
    });
    const controller = t.adopt(
      await ControllerProcess.start({
        args: [
          `--kubeconfig=${kubeconfigVia(controlPlane(), proxy.port, "throttled")}`,
          `--field-selector=metadata.namespace=${namespace}`,
          ...PLAIN,
          // Neither pacing nor the storm breaker: only Retry-After stands between a pod's DELETEs.
          "--max-deletions-per-minute=0",
          "--max-broken-fraction=1",
        ],
      }),
    );

    const deleted = () =>
      controllerDeletes(controlPlane().auditLogPath, namespace).filter((event) => event.responseStatus?.code === 200);
    await waitFor("every pod deleted", () => deleted().length === PODS, { timeoutMs: 60_000 });
    const expectedEvents = names.map((name) => `${name}:BrokenPodDeleted`).sort();
    await waitFor(
      "every Event written",
      async () =>
        JSON.stringify((await repairEvents(controlPlane(), namespace)).sort()) === JSON.stringify(expectedEvents),
      { timeoutMs: 60_000 },
    );

    // Throttled, not failed: the failing-repairs alert sees nothing.
    const deletes = proxy.log.filter((entry) => entry.method === "DELETE");
    const throttledDeletes = deletes.filter((entry) => entry.status === 429);
    expect(throttledDeletes).to.have.length(PODS * THROTTLES_PER_DELETE);
    const repaired = (result: string) =>
      controller.metric("cni_repair_pods_repaired_total", { type: "delete", result });
    expect(await repaired("throttled")).to.equal(PODS * THROTTLES_PER_DELETE);
    expect(await repaired("fail")).to.equal(0);
    expect(await repaired("success")).to.equal(PODS);
    expect(
      controller.logsWith("repair throttled by the API server", { retryAfterMs: RETRY_AFTER_SECONDS * 1000 }),
    ).to.have.length(PODS * THROTTLES_PER_DELETE);

    // No pod's DELETE came again before its Retry-After: by the proxy's log, and by the audit log's timestamps
    // for the DELETE that went through.
    const report = retryAfterReport(deletes);
    expect(report.retries).to.equal(PODS * THROTTLES_PER_DELETE);
    expect(report.violations).to.deep.equal([]);
    for (const event of deleted()) {
      const lastThrottle = lastAnswer(throttledDeletes, event.objectRef?.name ?? "");
      const waitedMs = Date.parse(event.requestReceivedTimestamp) - lastThrottle;
      expect(waitedMs, `${event.objectRef?.name}: audit DELETE after its last 429`).to.be.at.least(
        RETRY_AFTER_SECONDS * 1000 - 100,
      );
    }

    // Events: throttled too, paused for Retry-After, and in the end every one written, none counted failed.
    const eventWrites = proxy.log.filter((entry) => entry.method === "POST" && entry.url.includes("/events"));
    expect(eventWrites.filter((entry) => entry.status === 429)).to.have.length(EVENT_THROTTLES);
    expect(pauseViolations(eventWrites, OTHER_WRITERS)).to.deep.equal([]);
    expect(await controller.metric("cni_repair_events_failed_total")).to.equal(0);
  });
});

/** When the last 429 for this pod's DELETE was answered (ms since the epoch). */
function lastAnswer(throttled: readonly LoggedRequest[], pod: string): number {
  const times = throttled
    .filter((entry) => new URL(entry.url, "https://proxy").pathname.endsWith(`/pods/${pod}`))
    .map((entry) => entry.answeredAtMs ?? entry.atMs);
  return Math.max(...times);
}
