// A watch that went on from a streamed list (WatchList) on a resource that does not change: the real API server
// may send it no bookmark at all (its watch cache drops a bookmark at the version the watch started from once the end
// bookmark went out), while a plain watch hears one about once a minute. Which watches go quiet is the server's race
// (a watch registered while its cache was still starting does hear bookmarks), so the test takes whichever did. The
// controller, at its defaults but for a stall timeout just over that minute, resumes each as a plain one, quietly,
// and nothing is ever restarted as stalled or warned about. The audit log (which records pod requests) shows each
// quiet pod watch resumed: no initial events, from the end bookmark's version. A control plane of its own: on the
// shared one another test's leftovers may change pods or DaemonSets meanwhile, and a watch that hears them is not
// quiet.
import { expect } from "chai";
import { messageOf } from "../../../src/util/message-of.js";
import { type AuditEvent, auditLines } from "../../harness/audit-log.js";
import { ControlPlane } from "../../harness/control-plane.js";
import { ControllerProcess } from "../../harness/controller-process.js";
import { metricSeries } from "../../harness/metrics-text.js";
import { waitFor } from "../../harness/wait.js";

/** Just over the API server's bookmark heartbeat (a minute): a plain watch is never this quiet. */
const STALL_SECONDS = 70;
/** The `resource` label of each pod watch, and how the audit log tells its requests apart. */
const POD_WATCHES: Readonly<Record<string, (requestURI: string) => boolean>> = {
  pods: (uri) => !uri.includes("labelSelector="),
  "cni-agent-pods": (uri) => uri.includes("labelSelector=k8s-app%3Distio-cni-node"),
};

/** Each series of a counter on /metrics, by the value of one label. */
async function byLabel(controller: ControllerProcess, name: string, label: string, labels: Record<string, string>) {
  const series = metricSeries((await controller.get("/metrics")).body, name, labels);
  return Object.fromEntries(series.map((one) => [one.labels[label] ?? "", one.value]));
}

/**
 * The controller's watches of one set of pods that the API server started answering, in order. Not since a
 * wall-clock time: this plane is the test's own, and a VM's clock can be stepped back meanwhile.
 */
function podWatches(plane: ControlPlane, ofSet: (requestURI: string) => boolean): AuditEvent[] {
  return auditLines(plane.auditLogPath)
    .filter((line) => line.includes('"verb":"watch"') && line.includes('"resource":"pods"'))
    .map((line) => JSON.parse(line) as AuditEvent)
    .filter((event) => event.stage === "ResponseStarted" && (event.userAgent ?? "").startsWith("cni-repair/"))
    .filter((event) => ofSet(event.requestURI));
}

/** For a failure's message: every pod list and watch in the audit log, a line each. */
function podReads(plane: ControlPlane): string {
  return auditLines(plane.auditLogPath)
    .filter((line) => line.includes('"resource":"pods"') && /"verb":"(watch|list)"/.test(line))
    .map((line) => JSON.parse(line) as AuditEvent)
    .map((event) => `${event.stage} ${event.requestReceivedTimestamp} ${event.userAgent} ${event.requestURI}`)
    .join("\n");
}

describe("a quiet watch after a streamed list (WatchList)", function () {
  this.timeout((3 * STALL_SECONDS + 60) * 1000);
  let plane: ControlPlane | undefined;
  let controller: ControllerProcess | undefined;

  afterEach(async function () {
    if (this.currentTest?.state === "failed" && controller) console.log(controller.output());
    if (controller) expect(await controller.stop(), "controller exit code").to.equal(0);
    await plane?.stop();
    controller = undefined;
    plane = undefined;
  });

  it("is resumed as a plain watch without a warning, which hears the server's bookmarks: nothing stalls", async () => {
    plane = await ControlPlane.start();
    // At the defaults but for the stall timeout and election (one controller): the agent gate and Istio's settings
    // on, whose watches are the quiet ones.
    controller = await ControllerProcess.start({
      args: [`--kubeconfig=${plane.kubeconfigPath}`, "--leader-elect=false", `--watch-stall-timeout=${STALL_SECONDS}s`],
    });
    const running = controller;
    const restarts = (reason: string) => byLabel(running, "cni_repair_watch_restarts_total", "resource", { reason });
    const bookmarks = () => byLabel(running, "cni_repair_watch_events_total", "resource", { type: "BOOKMARK" });

    // Past the stall timeout every watch has either heard the server or been resumed as quiet.
    const startedMs = performance.now();
    const quiet = await waitFor(
      "the stall timeout to pass, with a streamed watch resumed as quiet",
      async () => {
        if (performance.now() - startedMs < (STALL_SECONDS + 10) * 1000) return false;
        const resumed = Object.entries(await restarts("quiet")).filter(([, count]) => count > 0);
        return resumed.length > 0 && { resources: resumed.map(([resource]) => resource) };
      },
      { timeoutMs: (STALL_SECONDS + 40) * 1000, intervalMs: 1000 },
    );
    const heardAtResume = await bookmarks();

    // Each resumed watch is a plain one: the server's heartbeat reaches it within about a minute.
    await waitFor(
      "a bookmark on every resumed watch",
      async () => {
        const now = await bookmarks();
        return quiet.resources.every((resource) => (now[resource] ?? 0) > (heardAtResume[resource] ?? 0));
      },
      { timeoutMs: (STALL_SECONDS + 20) * 1000, intervalMs: 1000 },
    );

    expect(
      Object.values(await restarts("stalled")).every((count) => count === 0),
      "stalled restarts",
    ).to.equal(true);
    expect(
      Object.values(await restarts("quiet")).every((count) => count <= 1),
      "one quiet resume each",
    ).to.equal(true);
    const warned = controller.logsWith("watch restarted").filter((line) => line.level === "warn");
    expect(warned, "warnings of a restarted watch").to.deep.equal([]);

    // The audit log has both watches of each quiet set of pods: the streamed one and, resumed from its end
    // bookmark, a plain one. (Other kinds are not audited.)
    const auditedPlane = plane;
    for (const resource of quiet.resources) {
      const ofSet = POD_WATCHES[resource];
      if (!ofSet) continue;
      const watches = await waitFor(
        `the audit log to show the ${resource} streamed watch and its resumed one`,
        () => {
          const found = podWatches(auditedPlane, ofSet);
          return found.length >= 2 && { found };
        },
        { timeoutMs: 20_000, intervalMs: 500 },
      ).catch((error: unknown) => {
        throw new Error(`${messageOf(error)}; the pod reads audited:\n${podReads(auditedPlane)}`);
      });
      const [streamed, resumed, ...later] = watches.found;
      expect(streamed?.requestURI, resource).to.include("sendInitialEvents=true");
      expect(resumed?.requestURI, resource).to.not.include("sendInitialEvents");
      expect(resumed?.requestURI, resource).to.match(/resourceVersion=\d+/);
      expect(later, `no ${resource} watch after the resumed one`).to.deep.equal([]);
    }
  });
});
