// Istio ambient: pods that should be enrolled with ztunnel but are not are reported (or, opted in, deleted
// under every guard), following namespace labels live.
import type { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { createAmbientPod, createZtunnel, DATAPLANE_MODE, labelAmbient } from "../../harness/ambient-pods.js";
import { controllerDeletes, podRequests } from "../../harness/audit-log.js";
import { createPodInState, repairEvents } from "../../harness/broken-pods.js";
import { createCniAgent, setCniAgentReady } from "../../harness/cni-agents.js";
import { runCommand } from "../../harness/controller-process.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { controllerTest } from "../controller/start.js";

const MINUTE_AGO = () => new Date(Date.now() - 60_000);

describe("istio-ambient preset", () => {
  const t = controllerTest();
  let api: CoreV1Api;
  let namespace: string;

  beforeEach(async () => {
    ({ api, namespace } = t);
  });

  const labelNamespace = (value: string | null) => labelAmbient(api, { namespace }, value);
  const dryRunsOf = () =>
    podRequests(controlPlane().auditLogPath, namespace)
      .filter((e) => e.verb === "delete" && (e.requestObject?.dryRun as string[] | undefined)?.includes("All"))
      .map((e) => e.objectRef?.name ?? "")
      .sort();

  it("reports unenrolled pods in an ambient namespace past the grace, and leaves the rest alone", async () => {
    await labelNamespace("ambient");
    await t.start(["--preset=istio,istio-ambient", "--ambient-enroll-grace=5s"]);
    await createAmbientPod(api, { namespace, name: "enrolled", redirection: "enabled", runningSince: MINUTE_AGO() });
    await createAmbientPod(api, { namespace, name: "missing", runningSince: MINUTE_AGO() });
    await createAmbientPod(api, { namespace, name: "pending", redirection: "pending", runningSince: MINUTE_AGO() });
    await createAmbientPod(api, {
      namespace,
      name: "opted-out",
      labels: { [DATAPLANE_MODE]: "none" },
      runningSince: MINUTE_AGO(),
    });
    await createAmbientPod(api, { namespace, name: "host-net", hostNetwork: true, runningSince: MINUTE_AGO() });
    // Sidecar wins: judged by the istio rule, which deletes it.
    await createPodInState(api, { namespace, name: "sidecar" });

    // Each is judged a grace after this controller first saw it in scope, however long it has been running.
    await waitFor("the two old unenrolled pods reported", () => dryRunsOf().length >= 2);
    expect(dryRunsOf()).to.deep.equal(["missing", "pending"]);
    const freshAt = Date.now();
    await createAmbientPod(api, { namespace, name: "fresh", runningSince: new Date(freshAt) });
    await waitFor("the fresh pod reported once its grace passed", () => dryRunsOf().includes("fresh"), {
      timeoutMs: 15_000,
    });
    const freshReport = podRequests(controlPlane().auditLogPath, namespace).find(
      (e) => e.verb === "delete" && e.objectRef?.name === "fresh",
    );
    // startedAt has whole seconds, so the grace can end up to 1 s early against our clock.
    expect(Date.parse(freshReport?.stageTimestamp ?? "") - freshAt).to.be.at.least(3_900);

    const realDeletes = controllerDeletes(controlPlane().auditLogPath, namespace)
      .filter((e) => !(e.requestObject?.dryRun as string[] | undefined)?.includes("All"))
      .map((e) => e.objectRef?.name);
    expect(realDeletes).to.deep.equal(["sidecar"]);
    expect(await t.metric("cni_repair_broken_pods", { rule: "istio-ambient" })).to.equal(3);
    expect(await t.metric("cni_repair_pods_repaired_total", { type: "report", result: "dry_run" })).to.equal(3);
    const events = await repairEvents(controlPlane(), namespace);
    expect(events).to.include("missing:BrokenPodDetected");
    const [line] = t.controller.logsWith("would delete broken pod", { pod: "pending" });
    expect(line?.reason).to.match(/^not enrolled: pending for \d+ s$/);
  });

  it("a namespace turned ambient brings its pods into scope (judged a grace later); turned back, takes them out", async () => {
    await t.start(["--preset=istio-ambient", "--ambient-enroll-grace=5s"]);
    await createAmbientPod(api, { namespace, name: "outside", runningSince: MINUTE_AGO() });
    await createAmbientPod(api, {
      namespace,
      name: "sentinel",
      labels: { [DATAPLANE_MODE]: "ambient" },
      runningSince: MINUTE_AGO(),
    });
    await waitFor("the labelled sentinel reported", () => dryRunsOf().includes("sentinel"));
    expect(dryRunsOf()).to.deep.equal(["sentinel"]);

    await labelNamespace("ambient");
    await waitFor("the pod reported without a restart", () => dryRunsOf().includes("outside"));
    expect(await t.metric("cni_repair_broken_pods", { rule: "istio-ambient" })).to.equal(2);

    await labelNamespace(null);
    await waitFor(
      "the gauge to drop",
      async () => (await t.metric("cni_repair_broken_pods", { rule: "istio-ambient" })) === 1,
    );
  });

  it("with --ambient-action=delete, holds for a ztunnel that is not Ready, then deletes", async () => {
    await labelNamespace("ambient");
    await t.start([
      "--preset=istio-ambient",
      "--ambient-enroll-grace=5s",
      "--ambient-action=delete",
      "--cni-agent-gate=on",
      "--cni-agent-min-ready=0s",
      `--cni-agent-namespace=${namespace}`,
      `--ztunnel-namespace=${namespace}`,
    ]);
    await createCniAgent(api, { namespace, mesh: "istio", nodeName: "node-a", readySince: MINUTE_AGO() });
    const ztunnel = await createZtunnel(api, { namespace, nodeName: "node-a" });
    await createAmbientPod(api, { namespace, name: "unenrolled", runningSince: MINUTE_AGO() });

    await waitFor(
      "the ztunnel hold",
      async () => (await t.metric("cni_repair_pods_held", { reason: "ztunnel_not_ready" })) === 1,
    );
    expect(controllerDeletes(controlPlane().auditLogPath, namespace)).to.deep.equal([]);

    await setCniAgentReady(api, { namespace, name: ztunnel }, new Date());
    // ztunnel turning Ready starts the enrolment grace over (it enrols the pods it finds when it starts).
    await waitFor("the delete", () => controllerDeletes(controlPlane().auditLogPath, namespace).length === 1, {
      timeoutMs: 15_000,
    });
    expect(controllerDeletes(controlPlane().auditLogPath, namespace)[0]?.objectRef?.name).to.equal("unenrolled");
  });

  it("scan shows ambient verdicts alongside sidecar ones", async () => {
    await labelNamespace("ambient");
    await createAmbientPod(api, { namespace, name: "a-unenrolled", runningSince: MINUTE_AGO() });
    await createPodInState(api, { namespace, name: "b-sidecar" });
    const result = await runCommand([
      "scan",
      `--kubeconfig=${controlPlane().kubeconfigPath}`,
      `--field-selector=metadata.namespace=${namespace}`,
      "--cni-agent-gate=off",
      // Istio's settings read here only: other tests leave theirs (repair off) in their own namespaces.
      `--cni-agent-namespace=${namespace}`,
      "--preset=istio,istio-ambient",
    ]);
    expect(result.code, result.stderr).to.equal(1);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[1]).to.match(
      /a-unenrolled +node-a +istio-ambient +not enrolled: annotation missing for \d+ s +report$/,
    );
    expect(lines[2]).to.match(/b-sidecar +node-a +istio +istio-validation exited 126 \(lastState\) +delete$/);
  });
});
