// `cni-repair scan`: the table, JSON and exit codes for a seeded namespace, and one repair pass with --repair
// (its permission self-check, and a 403 on one pod shown as that pod's result).
import { CoreV1Api, type V1PolicyRule } from "@kubernetes/client-node";
import { expect } from "chai";
import { parse } from "yaml";
import type { ScanReport } from "../../../src/cli/scan-output.js";
import { statusOf } from "../../harness/api-errors.js";
import { controllerDeletes, loggedControllerDeletes, podRequests } from "../../harness/audit-log.js";
import { createPodInState } from "../../harness/broken-pods.js";
import { runCommand } from "../../harness/controller-process.js";
import { type InCluster, inClusterIdentity } from "../../harness/in-cluster.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { refuseDeletes, UNDELETABLE_LABEL } from "../monitoring/scenario.js";

const READ_PODS: V1PolicyRule = { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] };
const WRITE_EVENTS: V1PolicyRule = { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create"] };
const LABEL_PODS: V1PolicyRule = { apiGroups: [""], resources: ["pods/status"], verbs: ["patch"] };

describe("cni-repair scan", () => {
  let api: CoreV1Api;
  let namespace: string;
  let identity: InCluster | undefined;

  afterEach(() => {
    identity?.cleanup();
    identity = undefined;
  });

  beforeEach(async () => {
    api = controlPlane().kubeConfig().makeApiClient(CoreV1Api);
    namespace = await createTestNamespace(api);
  });

  const scan = (...args: string[]) =>
    runCommand([
      "scan",
      `--kubeconfig=${controlPlane().kubeconfigPath}`,
      `--field-selector=metadata.namespace=${namespace}`,
      "--cni-agent-gate=off",
      // Istio's settings read here only: other tests leave theirs (repair off) in their own namespaces.
      `--cni-agent-namespace=${namespace}`,
      ...args,
    ]);

  const seed = async () => {
    await createPodInState(api, { namespace, name: "a-broken", nodeName: "n1" });
    await createPodInState(api, { namespace, name: "b-healthy", nodeName: "n1" }, { validator: { kind: "succeeded" } });
    await createPodInState(api, { namespace, name: "c-bare", nodeName: "n2", bare: true });
    await createPodInState(
      api,
      { namespace, name: "d-finished", nodeName: "n2", restartPolicy: "Never" },
      { validator: { kind: "failed", exitCode: 126 }, phase: "Failed" },
    );
  };

  it("prints a table of broken pods with what run would do, the scope and the count checked, and exits 1", async () => {
    await seed();
    const result = await scan();
    expect(result.code, result.stderr).to.equal(1);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).to.match(/^NAMESPACE +POD +NODE +RULE +REASON +ACTION$/);
    expect(lines).to.have.length(5);
    expect(lines[1]).to.match(
      new RegExp(`^${namespace} +a-broken +n1 +istio +istio-validation exited 126 \\(lastState\\) +delete$`),
    );
    // run labels a bare pod in delete mode (it only holds it from deletion): scan says so.
    expect(lines[2]).to.match(/c-bare +n2 +istio .* label \(held from delete: bare_pod: no controlling owner/);
    expect(lines[3]).to.match(/d-finished +n2 +istio +istio-validation exited 126 \(state\) +hold: terminal/);
    expect(lines[4]).to.equal(
      `4 pods checked (all namespaces, field selector metadata.namespace=${namespace}), 3 broken.`,
    );
    expect(controllerDeletes(controlPlane().auditLogPath, namespace)).to.deep.equal([]);
    // Logs are human text unless JSON is asked for: nothing on stderr parses as a JSON line.
    expect(result.stderr.split("\n").filter((line) => line.startsWith("{"))).to.deep.equal([]);
  });

  it("prints one JSON object with -o json: scope, counts and a structured record per broken pod", async () => {
    await seed();
    const result = await scan("-o", "json");
    expect(result.code).to.equal(1);
    const report = JSON.parse(result.stdout) as ScanReport;
    expect(report.scope).to.deep.equal({
      namespaces: [],
      excludeNamespaces: [],
      labelSelector: "",
      fieldSelector: `metadata.namespace=${namespace}`,
    });
    expect(report.counts).to.deep.equal({ checked: 4, broken: 3, byAction: { delete: 1, label: 1, hold: 1 } });
    const uids = Object.fromEntries(
      (await api.listNamespacedPod({ namespace })).items.map((pod) => [pod.metadata?.name, pod.metadata?.uid]),
    );
    const [broken, bare, finished] = report.pods;
    expect(broken).to.deep.equal({
      namespace,
      name: "a-broken",
      uid: uids["a-broken"],
      node: "n1",
      owner: { kind: "ReplicaSet", name: "app-7d9f" },
      rule: "istio",
      container: "istio-validation",
      exitCode: 126,
      where: "lastState",
      verdict: "broken",
      reason: "istio-validation exited 126 (lastState)",
      action: "delete",
      hold: null,
      fallback: null,
      skip: null,
      result: null,
    });
    expect(bare).to.include({ name: "c-bare", owner: null, action: "label", verdict: "broken" });
    expect(bare?.hold?.reason).to.equal("bare_pod");
    expect(finished).to.include({ name: "d-finished", where: "state", exitCode: 126, verdict: "terminal" });
    expect(finished).to.include({ action: "hold" });
    expect(finished?.hold?.reason).to.equal("terminal");
  });

  it("prints the same structure with -o yaml as with -o json", async () => {
    await seed();
    const [json, yaml] = [await scan("-o", "json"), await scan("-o", "yaml")];
    expect([json.code, yaml.code], yaml.stderr).to.deep.equal([1, 1]);
    expect(yaml.stdout).to.match(/^scope:\n/);
    const report = parse(yaml.stdout) as ScanReport;
    expect(report).to.deep.equal(JSON.parse(json.stdout));
    expect(report.counts.checked).to.equal(4);
    expect(report.pods.map((pod) => pod.name)).to.deep.equal(["a-broken", "c-bare", "d-finished"]);
  });

  it("logs human text, JSON lines only when asked; the Deployment's own variables do not stop it", async () => {
    // With the CNI agent gate on and no agent pods, the pipeline warns that broken pods will be held. Agent pods of
    // other tests (on the shared API server) must not match: the selector is this test's own.
    const gated = [
      "scan",
      `--kubeconfig=${controlPlane().kubeconfigPath}`,
      `--namespaces=${namespace}`,
      `--cni-agent-selector=k8s-app=no-agent-${namespace}`,
    ];
    const deployment = {
      CNI_REPAIR_HTTP_PORT: "9090",
      CNI_REPAIR_LEADER_ELECT: "false",
      CNI_REPAIR_RESYNC_PERIOD: "1m",
    };
    const text = await runCommand(gated, deployment);
    expect(text.code, text.stderr).to.equal(0);
    expect(text.stderr).to.match(/ warn +\[.*node agent gate: no pod matches the selector/);
    expect(text.stderr.split("\n").filter((line) => line.startsWith("{"))).to.deep.equal([]);
    const json = await runCommand([...gated, "--log-format=json"]);
    const lines = json.stderr
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { level: string; msg: string });
    expect(lines.map((line) => line.level)).to.include("warn");
    expect(lines.some((line) => line.msg.startsWith("node agent gate: no pod matches"))).to.equal(true);
  });

  it("exits 0 when nothing is broken, saying how many pods it checked; a namespace with no pods says 0", async () => {
    await createPodInState(api, { namespace, name: "healthy" }, { validator: { kind: "succeeded" } });
    const clean = await scan();
    expect(clean.code).to.equal(0);
    expect(clean.stdout).to.equal(
      `1 pod checked (all namespaces, field selector metadata.namespace=${namespace}), 0 broken.\n`,
    );

    const nowhere = await runCommand([
      "scan",
      `--kubeconfig=${controlPlane().kubeconfigPath}`,
      "--namespaces=no-such-namespace",
      "--cni-agent-gate=off",
      "--cni-agent-namespace=no-such-namespace",
    ]);
    expect(nowhere.code, nowhere.stderr).to.equal(0);
    expect(nowhere.stdout).to.match(/^0 pods checked \(namespace no-such-namespace, /);

    const unreachable = await runCommand(["scan", "--kubeconfig=/nonexistent/kubeconfig"]);
    expect(unreachable.code).to.equal(2);
    expect(unreachable.stderr).to.include("/nonexistent/kubeconfig");
  });

  it("--repair makes one guarded pass and prints what happened: deleted, labelled, held", async () => {
    await seed();
    const result = await scan("--repair", "-o", "json");
    expect(result.code, result.stderr).to.equal(1);
    expect(
      (await loggedControllerDeletes(controlPlane().auditLogPath, namespace, 1)).map((e) => e.objectRef?.name),
    ).to.deep.equal(["a-broken"]);
    const report = JSON.parse(result.stdout) as ScanReport;
    expect(report.pods.map((pod) => `${pod.name}:${pod.action}:${pod.result?.result ?? "-"}`)).to.deep.equal([
      "a-broken:delete:success",
      "c-bare:label:success",
      "d-finished:hold:-",
    ]);
    expect(result.stderr).to.include("delete success: 1");
  });

  it("--repair without a permission it needs exits 3 before writing anything", async () => {
    await seed();
    identity = await inClusterIdentity(controlPlane(), namespace, "scanner", [READ_PODS, LABEL_PODS, WRITE_EVENTS]);
    const result = await runCommand(
      ["scan", "--repair", `--field-selector=metadata.namespace=${namespace}`, "--cni-agent-gate=off"],
      identity.env,
    );
    expect(result.code, result.stderr).to.equal(3);
    expect(result.stderr).to.include("delete pods (cluster-wide)");
    expect(result.stdout).to.equal("");
    const writes = podRequests(controlPlane().auditLogPath, namespace).filter(
      (event) => event.verb !== "get" && event.verb !== "list" && event.verb !== "watch",
    );
    expect(writes.filter((event) => event.user?.username?.includes("scanner"))).to.deep.equal([]);
  });

  it("--repair with a 403 on one pod shows that pod refused with its status, and the other deleted", async () => {
    await createPodInState(api, {
      namespace,
      name: "a-refused",
      owner: { kind: "ReplicaSet", name: "a-1" },
      labels: { [UNDELETABLE_LABEL]: "true" },
    });
    await createPodInState(api, { namespace, name: "b-broken", owner: { kind: "ReplicaSet", name: "b-1" } });
    const allow = await refuseDeletes(controlPlane(), namespace);
    try {
      await waitFor(
        "the admission policy to refuse deletes",
        async () =>
          (await statusOf(api.deleteNamespacedPod({ namespace, name: "a-refused", body: { dryRun: ["All"] } }))) ===
          403,
      );
      const result = await scan("--repair", "-o", "json", "--max-retries=0");
      expect(result.code, result.stderr).to.equal(1);
      const report = JSON.parse(result.stdout) as ScanReport;
      const byName = Object.fromEntries(report.pods.map((pod) => [pod.name, pod.result]));
      expect(byName["a-refused"]).to.include({ type: "delete", result: "fail", status: 403 });
      expect(byName["b-broken"]).to.include({ type: "delete", result: "success" });
      const table = await scan("--repair");
      expect(table.stdout).to.match(/a-refused .* delete fail 403 /);
    } finally {
      await allow();
    }
  });
});
