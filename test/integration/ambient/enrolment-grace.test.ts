// Issue 18: an ambient pod is judged a grace period after it could first have been enrolled: after its sandbox was
// set up, after it entered ambient scope (the label change as this controller saw it; after a restart, its first
// sight), and after its node's agents turned Ready, ztunnel waiting --cni-agent-min-ready like the CNI agent.
// The controller runs as its own process; the API server's audit log says when it acted.
import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "chai";
import { crashAgain, createAmbientPod, createZtunnel, labelAmbient, markEnrolled } from "../../harness/ambient-pods.js";
import { podRequests } from "../../harness/audit-log.js";
import { repairEvents } from "../../harness/broken-pods.js";
import { createCniAgent, setCniAgentReady } from "../../harness/cni-agents.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { controllerTest } from "../controller/start.js";

// Long enough that the pod enrolled 3 s after the label is well inside it, even on a loaded machine.
const GRACE_MS = 6_000;
const GRACE = `--ambient-enroll-grace=${GRACE_MS / 1000}s`;
const LONG_AGO = () => new Date(Date.now() - 5 * 60_000);

describe("ambient enrolment grace", () => {
  const t = controllerTest();

  /** Requests cni-repair sent about one pod: dry-run deletes (reports), deletes, label patches. */
  const sentAbout = (pod: string) =>
    podRequests(controlPlane().auditLogPath, t.namespace).filter(
      (e) => e.objectRef?.name === pod && (e.userAgent ?? "").startsWith("cni-repair/"),
    );
  /** When the API server received cni-repair's first request about the pod (epoch ms). */
  const firstActedAt = async (pod: string, timeoutMs = 15_000): Promise<number> => {
    const event = await waitFor(`cni-repair to act on ${pod}`, () => sentAbout(pod)[0], { timeoutMs });
    return Date.parse(event.requestReceivedTimestamp);
  };
  const isDryRun = (pod: string) =>
    sentAbout(pod).every((e) => (e.requestObject?.dryRun as string[] | undefined)?.includes("All") === true);
  const cachedPods = (count: number) =>
    waitFor(`${count} pods in the cache`, async () => (await t.metric("cni_repair_cache_pods")) === count);
  const eventsAbout = async (pod: string) =>
    (await repairEvents(controlPlane(), t.namespace)).filter((event) => event.startsWith(`${pod}:`));

  for (const target of ["namespace", "pod"] as const) {
    for (const action of ["report", "delete"] as const) {
      it(`${target} labelled ambient under pods running for minutes: ${action}s a never-enrolled pod only a grace after the label; one enrolled 3 s after it is never touched`, async () => {
        const { api, namespace } = t;
        await t.start(["--preset=istio-ambient", GRACE, `--ambient-action=${action}`]);
        for (const name of ["never", "late"])
          await createAmbientPod(api, { namespace, name, runningSince: LONG_AGO() });
        // Seen out of scope first, as an operator's running workloads are.
        await cachedPods(2);

        const labelledAt = Date.now();
        if (target === "namespace") await labelAmbient(api, { namespace }, "ambient");
        else for (const pod of ["never", "late"]) await labelAmbient(api, { namespace, pod }, "ambient");
        await sleep(3_000);
        // The CNI agent enrols one of them, 3 s after the label.
        await markEnrolled(api, { namespace, name: "late" });

        expect((await firstActedAt("never")) - labelledAt).to.be.at.least(GRACE_MS);
        expect(isDryRun("never")).to.equal(action === "report");
        expect(sentAbout("never").map((e) => e.verb)).to.deep.equal(["delete"]);
        // The enrolled pod's grace ended with the other's: give a stray timer a moment more, then nothing.
        await sleep(1_000);
        expect(sentAbout("late")).to.deep.equal([]);
        expect(await eventsAbout("late")).to.deep.equal([]);
        const outcome = action === "report" ? "would delete broken pod" : "repaired broken pod";
        const [line] = t.controller.logsWith(outcome, { pod: "never" });
        expect(line?.graceStarted).to.match(/\(entered ambient scope \(seen by this controller\)\)$/);
      });
    }
  }

  it("restarted after the label: counts the grace from the new process's first sight of the pod, never shorter", async () => {
    const { api, namespace } = t;
    const first = await t.start(["--preset=istio-ambient", GRACE]);
    await createAmbientPod(api, { namespace, name: "never", runningSince: LONG_AGO() });
    await cachedPods(1);
    await labelAmbient(api, { namespace }, "ambient");
    await sleep(GRACE_MS / 2);
    expect(await first.stop(), "first controller exit code").to.equal(0);
    expect(sentAbout("never")).to.deep.equal([]);

    const restartedAt = Date.now();
    await t.start(["--preset=istio-ambient", GRACE]);
    expect((await firstActedAt("never")) - restartedAt).to.be.at.least(GRACE_MS);
    // The ambient rule's default action is to report: a dry-run delete.
    // The line is logged once the answer is back, which can be after the audit log has the request: wait for it.
    const { lines } = await waitFor("the report's log line", async () => {
      const found = t.controller.logsWith("would delete broken pod", { pod: "never" });
      return found.length > 0 && { lines: found };
    });
    const [line] = lines;
    expect(Date.parse(String(line?.graceStarted).split(" ")[0] ?? "")).to.be.at.least(restartedAt);
  });

  it("judges a crash-looping pod from its sandbox, however often its app restarts; a Failed pod gets no Event", async () => {
    const { api, namespace } = t;
    await labelAmbient(api, { namespace }, "ambient");
    const sandboxSince = LONG_AGO();
    await createAmbientPod(api, { namespace, name: "crashing", runningSince: sandboxSince, app: "crash-looping" });
    await createAmbientPod(api, { namespace, name: "failed", runningSince: LONG_AGO(), phase: "Failed" });
    const startedAt = Date.now();
    await t.start(["--preset=istio-ambient", GRACE]);

    // The kubelet restarts the app every second meanwhile; no restart may start the grace over.
    let restarts = 1;
    let acted = false;
    const kubelet = (async () => {
      while (!acted) {
        await sleep(1_000);
        if (!acted) await crashAgain(api, { namespace, name: "crashing" }, ++restarts, sandboxSince);
      }
    })();
    const actedAt = await firstActedAt("crashing", 20_000).finally(() => {
      acted = true;
    });
    await kubelet;
    expect(restarts, "restarts during the grace").to.be.at.least(3);
    expect(actedAt - startedAt).to.be.at.least(GRACE_MS);
    expect(await eventsAbout("crashing")).to.deep.equal(["crashing:BrokenPodDetected"]);

    // The Failed pod was seen as early and its grace would be over: it is finished, so it is neither judged nor
    // reported, and gets no Warning.
    await sleep(1_000);
    expect(sentAbout("failed")).to.deep.equal([]);
    expect(await eventsAbout("failed")).to.deep.equal([]);
    expect(await t.metric("cni_repair_broken_pods", { rule: "istio-ambient" })).to.equal(1);
  });

  it("ztunnel turning Ready: no delete before --cni-agent-min-ready has passed since", async () => {
    const { api, namespace } = t;
    const minReadyMs = 5_000;
    await labelAmbient(api, { namespace }, "ambient");
    await t.start([
      "--preset=istio-ambient",
      "--ambient-enroll-grace=1s",
      "--ambient-action=delete",
      "--cni-agent-gate=on",
      `--cni-agent-min-ready=${minReadyMs / 1000}s`,
      `--cni-agent-namespace=${namespace}`,
      `--ztunnel-namespace=${namespace}`,
    ]);
    await createCniAgent(api, { namespace, mesh: "istio", nodeName: "node-a", readySince: LONG_AGO() });
    const ztunnel = await createZtunnel(api, { namespace, nodeName: "node-a" });
    await createAmbientPod(api, { namespace, name: "unenrolled", runningSince: LONG_AGO() });
    await waitFor(
      "the ztunnel hold",
      async () => (await t.metric("cni_repair_pods_held", { reason: "ztunnel_not_ready" })) === 1,
      { timeoutMs: 20_000 },
    );

    const readyAt = Date.now();
    await setCniAgentReady(api, { namespace, name: ztunnel }, new Date(readyAt));
    expect((await firstActedAt("unenrolled", 20_000)) - readyAt).to.be.at.least(minReadyMs);
    expect(sentAbout("unenrolled").map((e) => e.verb)).to.deep.equal(["delete"]);
    expect(isDryRun("unenrolled")).to.equal(false);
    const waits = t.controller.logsWith("broken pod held", { pod: "unenrolled", hold: "ztunnel_not_ready" });
    expect(waits.map((line) => line.detail)).to.satisfy((details: unknown[]) =>
      details.some((detail) =>
        /^the ztunnel on node node-a has been Ready for [0-4] s of the 5 s required$/.test(String(detail)),
      ),
    );
  });
});
