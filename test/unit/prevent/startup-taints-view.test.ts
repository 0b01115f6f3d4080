// StartupTaints.view, what scan and explain show of a node, is a dry look: it changes nothing the reconcile
// counts from. Before, each look started (or ended) the node's NotReady time, so a second look a minute later
// said "taint it now" although nothing had ever watched the agent that long.
import { expect } from "chai";
import { CniAgents } from "../../../src/informer/cni-agent-pods.js";
import { StartupTaints } from "../../../src/prevent/startup-taints.js";
import { silentLogger } from "../../support/loggers.js";
import { scriptedTransport } from "../../support/scripted-transport.js";
import { FakeClock } from "../fake-clock.js";

const NOW = Date.parse("2026-12-04T12:00:00Z");

function setup(clock: FakeClock) {
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
    clock,
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
    const clock = new FakeClock(NOW);
    const taints = setup(clock);
    expect(taints.view("node-a")?.decision).to.deep.equal({ kind: "none", retryAfterMs: 30_000 });
    clock.advance(60_000);
    expect(taints.view("node-a")?.decision).to.deep.equal({ kind: "none", retryAfterMs: 30_000 });
  });

  it("counts the NotReady time on the monotonic clock: a wall clock set forward or back neither taints early nor late", async () => {
    for (const step of [3_600_000, -3_600_000]) {
      const clock = new FakeClock(NOW);
      const taints = setup(clock);
      await taints.reconcile("node-a"); // the reconcile's own sight starts the NotReady time
      clock.advance(10_000);
      clock.stepWallClock(step);
      expect(taints.view("node-a")?.decision, String(step)).to.deep.equal({ kind: "none", retryAfterMs: 20_000 });
      clock.advance(20_000);
      expect(taints.view("node-a")?.decision.kind, String(step)).to.equal("add");
    }
  });
});
