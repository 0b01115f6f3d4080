// `cni-repair scan`: the table, JSON and exit codes for a seeded namespace, and one repair pass with --repair.
import { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { controllerDeletes } from "../../harness/audit-log.js";
import { createPodInState } from "../../harness/broken-pods.js";
import { runCommand } from "../../harness/controller-process.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { controlPlane } from "../../harness/shared-control-plane.js";

describe("cni-repair scan", () => {
  let api: CoreV1Api;
  let namespace: string;

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

  it("prints a table of broken pods with what run would do, and exits 1", async () => {
    await seed();
    const result = await scan();
    expect(result.code, result.stderr).to.equal(1);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).to.match(/^NAMESPACE +POD +NODE +RULE +REASON +ACTION$/);
    expect(lines).to.have.length(4);
    expect(lines[1]).to.match(
      new RegExp(`^${namespace} +a-broken +n1 +istio +istio-validation exited 126 \\(lastState\\) +delete$`),
    );
    expect(lines[2]).to.match(/c-bare +n2 +istio .* hold: bare_pod \(no controlling owner/);
    expect(lines[3]).to.match(/d-finished +n2 +istio +istio-validation exited 126 \(state\) +hold: terminal/);
    expect(controllerDeletes(controlPlane().auditLogPath, namespace)).to.deep.equal([]);
  });

  it("prints JSON with -o json", async () => {
    await seed();
    const result = await scan("-o", "json");
    expect(result.code).to.equal(1);
    const rows = JSON.parse(result.stdout) as { pod: string; action: string }[];
    expect(rows.map((row) => `${row.pod}:${row.action}`)).to.deep.equal([
      "a-broken:delete",
      "c-bare:hold: bare_pod",
      "d-finished:hold: terminal",
    ]);
  });

  it("exits 0 when nothing is broken, 2 when the API server cannot be reached", async () => {
    await createPodInState(api, { namespace, name: "healthy" }, { validator: { kind: "succeeded" } });
    const clean = await scan();
    expect(clean.code).to.equal(0);
    expect(clean.stdout).to.equal("No broken pods found.\n");

    const unreachable = await runCommand(["scan", "--kubeconfig=/nonexistent/kubeconfig"]);
    expect(unreachable.code).to.equal(2);
    expect(unreachable.stderr).to.include("/nonexistent/kubeconfig");
  });

  it("--repair makes one guarded pass: deletes what run would delete, leaves the held", async () => {
    await seed();
    const result = await scan("--repair");
    expect(result.code, result.stderr).to.equal(1);
    expect(controllerDeletes(controlPlane().auditLogPath, namespace).map((e) => e.objectRef?.name)).to.deep.equal([
      "a-broken",
    ]);
    expect(result.stdout).to.not.include("a-broken");
    expect(result.stdout).to.include("c-bare").and.include("d-finished");
    expect(result.stderr).to.include("delete success: 1");
  });
});
