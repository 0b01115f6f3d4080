// StartupTaints.view, what scan and explain show of a node, is a dry look: it changes nothing the reconcile
// counts from. Before, each look started (or ended) the node's NotReady time, so a second look a minute later
// said "taint it now" although nothing had ever watched the agent that long.
import { expect } from "chai";
import { CniAgents } from "../../../src/informer/cni-agent-pods.js";
import { StartupTaints } from "../../../src/prevent/startup-taints.js";
import { silentLogger } from "../../support/loggers.js";
import { scriptedTransport } from "../../support/scripted-transport.js";

const NOW = Date.parse("2026-12-04T12:00:00Z");

function setup() {
  const agents = new CniAgents();
  // The node's CNI agent pod is there, and not Ready.
  agents.store.upsert({
    namespace: "istio-system",
    name: "istio-cni-node-1",
    nodeName: "node-a",
    readySinceMs: undefined,
    seenReadyAtMs: undefined,
  });
  const taints = new StartupTaints({
    policy: {
      mode: "continuous",
      keys: ["cni.istio.io/not-ready"],
      notReadyAfterMs: 30_000,
      maxShare: 1,
      minReadyMs: 0,
    },
    report: true,
    agents: [agents],
    transport: scriptedTransport({}).transport,
    logger: silentLogger(),
    queue: { add: () => {} },
    events: { postAbout: () => {} },
  });
  taints.nodes.upsert({
    name: "node-a",
    uid: "uid-a",
    resourceVersion: "1",
    createdAtMs: NOW - 3_600_000,
    taints: undefined,
  });
  return taints;
}

describe("prevent/StartupTaints.view", () => {
  it("starts no NotReady time: a look a minute after another still finds the agent NotReady for no time", () => {
    const taints = setup();
    expect(taints.view("node-a", NOW)?.decision).to.deep.equal({ kind: "none", retryAfterMs: 30_000 });
    expect(taints.view("node-a", NOW + 60_000)?.decision).to.deep.equal({ kind: "none", retryAfterMs: 30_000 });
  });
});
