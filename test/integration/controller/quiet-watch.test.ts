// A watch that went on from a streamed list (WatchList) on a resource that does not change: the real API server
// sends it no bookmark at all (its watch cache drops a bookmark at the version the watch started from once the end
// bookmark went out), while a plain watch hears one about once a minute. So the controller, at its defaults but for a
// stall timeout just over that minute, resumes such a watch as a plain one, quietly, and nothing is ever restarted
// as stalled or warned about. The audit log (which records pod requests) shows the CNI agent pods' watch resumed:
// no initial events, from the end bookmark's version. A control plane of its own: on the shared one another test's
// leftovers may change pods or DaemonSets meanwhile, and a watch that hears them is not quiet.
import { readFileSync } from "node:fs";
import { expect } from "chai";
import type { AuditEvent } from "../../harness/audit-log.js";
import { ControlPlane } from "../../harness/control-plane.js";
import { ControllerProcess } from "../../harness/controller-process.js";
import { waitFor } from "../../harness/wait.js";

/** Just over the API server's bookmark heartbeat (a minute): a plain watch is never this quiet. */
const STALL_SECONDS = 70;
/** Istio's agent: its DaemonSet and its pods (by their label), which nothing changes while this test runs. */
const AGENT = "istio-cni-node";

/** Each series of a counter on /metrics, by the value of one label. */
async function byLabel(controller: ControllerProcess, name: string, label: string, labels: Record<string, string>) {
  const body = (await controller.get("/metrics")).body;
  const values: Record<string, number> = {};
  for (const line of body.split("\n")) {
    const match = /^(\w+)\{(.*)\} (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const series = Object.fromEntries([...(match[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => series[key] === value)) {
      values[series[label] ?? ""] = Number(match[3]);
    }
  }
  return values;
}

/** The watches of the CNI agent's pods the API server started answering since `sinceMs`, in order. */
function agentPodWatches(plane: ControlPlane, sinceMs: number): AuditEvent[] {
  return readFileSync(plane.auditLogPath, "utf8")
    .split("\n")
    .filter((line) => line.includes('"verb":"watch"') && line.includes(`k8s-app%3D${AGENT}`))
    .map((line) => JSON.parse(line) as AuditEvent)
    .filter((event) => event.stage === "ResponseStarted" && Date.parse(event.requestReceivedTimestamp) >= sinceMs)
    .filter((event) => (event.userAgent ?? "").startsWith("cni-repair/"));
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
    const startedMs = Date.now() - 1000;
    // At the defaults but for the stall timeout and election (one controller): the agent gate and Istio's settings
    // on, whose watches are the quiet ones.
    controller = await ControllerProcess.start({
      args: [`--kubeconfig=${plane.kubeconfigPath}`, "--leader-elect=false", `--watch-stall-timeout=${STALL_SECONDS}s`],
    });
    const running = controller;
    const restarts = (reason: string) => byLabel(running, "cni_repair_watch_restarts_total", "resource", { reason });
    const bookmarks = () => byLabel(running, "cni_repair_watch_events_total", "resource", { type: "BOOKMARK" });

    await waitFor(
      "the DaemonSet's streamed list to be resumed as a quiet watch",
      async () => {
        return ((await restarts("quiet"))[AGENT] ?? 0) >= 1;
      },
      { timeoutMs: (STALL_SECONDS + 30) * 1000, intervalMs: 1000 },
    );
    const quiet = Object.entries(await restarts("quiet")).filter(([, count]) => count > 0);
    const heardAtResume = await bookmarks();

    // Each resumed watch is a plain one: the server's heartbeat reaches it within about a minute.
    await waitFor(
      "a bookmark on every resumed watch",
      async () => {
        const now = await bookmarks();
        return quiet.every(([resource]) => (now[resource] ?? 0) > (heardAtResume[resource] ?? 0));
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

    const [streamed, resumed, ...later] = agentPodWatches(plane, startedMs);
    expect(streamed?.requestURI).to.include("sendInitialEvents=true");
    expect(resumed?.requestURI).to.not.include("sendInitialEvents");
    expect(resumed?.requestURI).to.match(/resourceVersion=\d+/);
    expect(later, "no watch of the agent pods after the resumed one").to.deep.equal([]);
  });
});
