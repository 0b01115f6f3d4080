// `make demo`: a local control plane, meshed pods broken by the CNI race, and cni-repair repairing them live.
// Usage: node dist/test/demo/demo.js [--agent-ready-after=<seconds>] [cni-repair flags...]; Ctrl-C tears down.
import { setTimeout as sleep } from "node:timers/promises";
import { CoreV1Api } from "@kubernetes/client-node";
import { ControlPlane } from "../harness/control-plane.js";
import { ControllerProcess } from "../harness/controller-process.js";
import { DEMO_NAMESPACE, DEMO_PODS, finishDeletion, LATE_NODE, makeLateAgentsReady, seedDemo } from "./seed.js";
import { LogNarrator, parseMetrics, summarize } from "./summary.js";

/** The /metrics totals last printed (top of the module: the story below runs at import). */
let lastSummary = "";

const { agentReadyAfterMs, controllerArgs } = parseArgs(process.argv.slice(2));

const stop = new AbortController();
let exitCode = 0;
const narrator = new LogNarrator();
let logsRead = 0;
const interrupt = (signal: NodeJS.Signals) => {
  if (stop.signal.aborted) return;
  console.log(`\n${signal}: tearing down the controller and the control plane…`);
  stop.abort();
};
process.once("SIGINT", interrupt);
process.once("SIGTERM", interrupt);

let plane: ControlPlane | undefined;
let controller: ControllerProcess | undefined;
try {
  console.log("cni-repair demo: starting a local control plane (etcd + kube-apiserver on loopback)…");
  plane = await ControlPlane.start();
  const api = plane.kubeConfig().makeApiClient(CoreV1Api);
  await seedDemo(api);
  const broken = DEMO_PODS.filter((pod) => pod.validator.kind !== "succeeded");
  console.log(
    `seeded namespace ${DEMO_NAMESPACE}: ${DEMO_PODS.length - broken.length} healthy meshed pods (istio and linkerd), ` +
      `${broken.length} broken by the CNI race; the CNI agents on ${LATE_NODE} are not Ready yet; Istio's own repair is off`,
  );
  if (!stop.signal.aborted) {
    controller = await ControllerProcess.start({
      // One instance: no election (nothing to hand over, and no Lease to release while Ctrl-C also stops the API server).
      args: [
        `--kubeconfig=${plane.kubeconfigPath}`,
        "--preset=istio,linkerd",
        "--leader-elect=false",
        ...controllerArgs,
      ],
    });
    console.log(
      [
        "",
        `cni-repair is running (its own process, out-of-cluster): node dist/src/cli/main.js run --preset=istio,linkerd --leader-elect=false ${controllerArgs.join(" ")}`.trimEnd(),
        `  metrics:    ${controller.url}/metrics   (also /healthz, /readyz)`,
        `  kubeconfig: ${plane.kubeconfigPath}   (API server ${plane.server})`,
        `  the CNI agents on ${LATE_NODE} become Ready in ${Math.round(agentReadyAfterMs / 1000)} s; Ctrl-C stops and cleans up`,
        "",
      ].join("\n"),
    );
    const running = controller;
    await Promise.all(
      [
        narrate(running, stop.signal),
        simulateKubelet(api, running, stop.signal),
        readyLateAgents(api, running, stop.signal),
      ].map((task) => task.catch(fail)),
    );
  }
} catch (error) {
  fail(error);
} finally {
  stop.abort();
  await controller?.stop();
  await plane?.stop();
  if (plane) console.log(`stopped: controller and control plane ended, ${plane.dir} removed`);
}
process.exit(exitCode);

/** A failure of any part ends the demo (after an interrupt, failures are just the teardown showing). */
function fail(error: unknown): void {
  if (stop.signal.aborted) return;
  console.error(`demo failed: ${(error as Error).stack ?? String(error)}`);
  if (controller) console.error(`controller output:\n${controller.output()}`);
  exitCode = 1;
  stop.abort();
}

/** Prints what the controller logged since the last call, as narration. */
function printNewLogs(running: ControllerProcess): void {
  for (; logsRead < running.logs.length; logsRead++) {
    const line = running.logs[logsRead];
    const text = line && narrator.narrate(line);
    if (text) console.log(text);
  }
}

/** Prints the /metrics totals if they changed since last printed. */
async function printSummary(running: ControllerProcess): Promise<void> {
  const metrics = await running.get("/metrics").catch(() => ({ status: 0, body: "" }));
  if (metrics.status !== 200) return;
  const summary = summarize(parseMetrics(metrics.body));
  if (summary !== lastSummary) console.log(`  ── ${summary}`);
  lastSummary = summary;
}

/** Prints each repair and hold as the controller logs it, and the /metrics totals whenever they change. */
async function narrate(running: ControllerProcess, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    printNewLogs(running);
    await printSummary(running);
    const exited = await Promise.race([
      running.exited.then(() => true),
      sleep(1_000, false, { signal }).catch(() => false),
    ]);
    if (exited && !signal.aborted) throw new Error("the controller exited");
  }
}

/** No kubelet or ReplicaSet controller runs here: finish the deletions and create healthy replacements. */
async function simulateKubelet(api: CoreV1Api, running: ControllerProcess, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    const pods = await api.listNamespacedPod({ namespace: DEMO_NAMESPACE });
    for (const pod of pods.items.filter((p) => p.metadata?.deletionTimestamp)) {
      // The controller's account of the deletion first.
      printNewLogs(running);
      const replacement = await finishDeletion(api, pod);
      console.log(
        `    (kubelet) ${pod.metadata?.name} is gone` +
          (replacement ? `; (ReplicaSet) created ${replacement}, healthy this time` : ""),
      );
    }
    await sleep(1_000, undefined, { signal }).catch(() => undefined);
  }
}

/** After a while, node-c's agents become Ready; once its held pods are repaired, says the demo is complete. */
async function readyLateAgents(api: CoreV1Api, running: ControllerProcess, signal: AbortSignal): Promise<void> {
  const wait = (ms: number) => sleep(ms, true, { signal }).catch(() => false);
  if (!(await wait(agentReadyAfterMs))) return;
  await makeLateAgentsReady(api);
  console.log(
    `  → the CNI agents on ${LATE_NODE} are Ready now: its held pods are repaired once the agents stay Ready`,
  );
  while (await wait(1_000)) {
    if ((await running.metric("cni_repair_pods_held", { reason: "cni_agent_not_ready" })) > 0) continue;
    printNewLogs(running);
    // The final totals before the last word, not a second later.
    await printSummary(running);
    console.log(
      `\ndone: every pod that could be repaired was; the rest stay held on purpose (see above). ` +
        `Explore ${running.url}/metrics, or Ctrl-C to stop.`,
    );
    return;
  }
}

function parseArgs(argv: readonly string[]): { agentReadyAfterMs: number; controllerArgs: string[] } {
  let agentReadyAfterMs = 30_000;
  const controllerArgs: string[] = [];
  for (const arg of argv) {
    const match = /^--agent-ready-after=(\d+)$/.exec(arg);
    if (match) agentReadyAfterMs = Number(match[1]) * 1000;
    else if (arg === "--help" || arg === "-h") {
      console.log(
        "usage: make demo [ARGS='--agent-ready-after=<seconds> <cni-repair flags>']\n" +
          "Starts a local control plane, seeds broken meshed pods, runs cni-repair against it; Ctrl-C tears down.",
      );
      process.exit(0);
    } else controllerArgs.push(arg);
  }
  return { agentReadyAfterMs, controllerArgs };
}
