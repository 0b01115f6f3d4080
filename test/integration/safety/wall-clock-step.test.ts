// A wall clock set forward (an NTP step, a VM resumed from a snapshot and its clock corrected) must not let the
// node-agent gate pass early: --cni-agent-min-ready counts from when this controller saw the agent turn Ready, on
// the monotonic clock. The controller is the real composition (composeController) against the real API server, with
// a clock whose wall time the test sets forward an hour; the audit log judges when the DELETEs came.
import { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { podKey } from "../../../src/detect/facts.js";
import { agentName, createCniAgent, setCniAgentReady } from "../../harness/cni-agents.js";
import { type InProcessController, startInProcessController } from "../../harness/in-process-controller.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { SteppedClock } from "../election/electors.js";
import { NodeWave, sleep } from "./storm-waves.js";

const MIN_READY_MS = 8_000;
const HOUR_MS = 3_600_000;

describe("the node-agent gate with the wall clock set forward", function () {
  this.timeout(60_000);
  let controller: InProcessController | undefined;

  afterEach(async function () {
    if (this.currentTest?.state === "failed") console.log(controller?.lines.join("\n"));
    await controller?.stop();
    controller = undefined;
  });

  it("deletes no pod before the agent has been Ready for --cni-agent-min-ready since the controller saw it, though the wall clock jumped an hour", async () => {
    const api = controlPlane().kubeConfig().makeApiClient(CoreV1Api);
    const namespace = await createTestNamespace(api);
    const wave = new NodeWave(api, namespace, "stepped-node");
    const names = wave.names(2);
    // The agent is there but not Ready yet: the broken pods are held for it.
    await createCniAgent(api, { namespace, mesh: "istio", nodeName: wave.node });
    await wave.createHealthy(names);

    const flags = [
      "--cni-agent-gate=on",
      `--cni-agent-min-ready=${MIN_READY_MS / 1000}s`,
      // Every held pod is judged again each second, as a watch event about it would.
      "--resync-period=1s",
    ];
    const clock = new SteppedClock();
    controller = startInProcessController(namespace, flags, { clock });
    const { parts, registry } = controller;

    await wave.break(names);
    const held = async () =>
      (await registry.getSingleMetric("cni_repair_pods_held")?.get())?.values.find(
        (value) => value.labels.reason === "cni_agent_not_ready",
      )?.value;
    await waitFor("both held for the agent", async () => (await held()) === 2, { timeoutMs: 20_000 });

    // The kubelet says Ready since an hour ago; the controller sees it turn Ready now, and counts from then.
    const readyWrittenAt = Date.now();
    await setCniAgentReady(api, { namespace, name: agentName("istio", wave.node) }, new Date(readyWrittenAt - HOUR_MS));
    const seenReady = () => {
      const facts = parts.query.pod(podKey(namespace, names[0] ?? ""));
      return facts !== undefined && parts.query.agents(facts, "istio")[0]?.seenReadySince != null;
    };
    await waitFor("the agent seen Ready", seenReady, { timeoutMs: 10_000, intervalMs: 10 });

    // The wall clock jumps an hour forward; the next resyncs judge the held pods again.
    clock.step(HOUR_MS);
    await sleep(3_000);
    expect(wave.deletes(), "deleted within 3 s of the step").to.deep.equal([]);

    // Once min-ready has passed on the monotonic clock, both go (the server's times: the audit log's).
    await waitFor("both deleted", () => wave.deletes().length === 2, { timeoutMs: 20_000 });
    for (const d of wave.deletes()) expect(d.atMs - readyWrittenAt).to.be.at.least(MIN_READY_MS - 500);
  });
});
