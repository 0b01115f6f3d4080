// The startup-taint judge and reconciler (prevent/taint-judge.ts, prevent/startup-taints.ts) over a node cache fed
// by a scripted API server: a look (scan, explain) is dry; a taint added counts under the share cap until the watch
// delivers it (expectations, not a write into the cache); every write tests the version judged; and nothing is
// written once this replica does not hold the Lease at the moment of writing.
import { expect } from "chai";
import { parseConfig } from "../../../src/config/config.js";
import { CniAgents } from "../../../src/informer/cni-agent-pods.js";
import { NodeCache } from "../../../src/informer/node-cache.js";
import { reflectorSettings } from "../../../src/informer/reflector-settings.js";
import { StartupTaints } from "../../../src/prevent/startup-taints.js";
import { TaintExpectations } from "../../../src/prevent/taint-expectations.js";
import { TaintJudge } from "../../../src/prevent/taint-judge.js";
import type { TaintPolicy } from "../../../src/prevent/taint-policy.js";
import { cniReadiness } from "../../support/agent-readiness.js";
import { silentLogger } from "../../support/loggers.js";
import { type ScriptedAnswer, type ScriptedCall, scriptedTransport } from "../../support/scripted-transport.js";
import { FakeClock } from "../fake-clock.js";

const NOW = Date.parse("2026-12-04T12:00:00Z");
const ISTIO = "cni.istio.io/not-ready";
const POLICY: TaintPolicy = {
  mode: "continuous",
  keys: [ISTIO],
  notReadyAfterMs: 30_000,
  maxShare: 1,
  minReadyMs: 0,
};

type NodeJson = { metadata: { name: string; uid: string; resourceVersion: string }; spec: { taints?: unknown[] } };
const node = (name: string, resourceVersion: string, taints?: unknown[]): NodeJson => ({
  metadata: { name, uid: `uid-${name}`, resourceVersion },
  spec: taints ? { taints } : {},
});

function setup(
  clock: FakeClock,
  options: {
    nodes: NodeJson[];
    policy?: Partial<TaintPolicy>;
    report?: boolean;
    patch?: () => ScriptedAnswer;
    leading?: () => boolean;
  },
) {
  let listed = options.nodes;
  const { transport, calls } = scriptedTransport({
    request: (call) =>
      call.method === "PATCH"
        ? (options.patch?.() ?? { body: {} })
        : { body: { items: listed, metadata: { resourceVersion: "10" } } },
  });
  const { config } = parseConfig(["run", "--watch-list=false"], {});
  const nodes = new NodeCache({
    config: { nodeName: undefined },
    settings: reflectorSettings(config, transport),
    keys: [ISTIO],
    observer: { listed: () => {}, watchEvent: () => {}, watchRestart: () => {}, listenerFailed: () => {} },
    clock,
  });
  // Every node's CNI agent pod is there, and not Ready.
  const agents = new CniAgents();
  for (const { metadata } of options.nodes) {
    agents.store.upsert({
      namespace: "istio-system",
      name: `istio-cni-node-${metadata.name}`,
      nodeName: metadata.name,
      readySinceMs: undefined,
      seenReadyAtMs: undefined,
    });
  }
  const expectations = new TaintExpectations(nodes.store, clock);
  const judge = new TaintJudge({
    policy: { ...POLICY, ...options.policy },
    nodes,
    readiness: cniReadiness(agents, 0, { clock }),
    expectations,
    clock,
  });
  const taints = new StartupTaints({
    judge,
    expectations,
    report: options.report ?? false,
    transport,
    mayWrite: options.leading ?? (() => true),
    logger: silentLogger(),
    events: { postAbout: () => {} },
  });
  /** The watch delivers the nodes as they are now (a list, then the watch starts). */
  const deliver = async (now: NodeJson[] = listed) => {
    listed = now;
    const stop = new AbortController();
    const watches = calls.filter((call) => call.kind === "watch").length;
    const running = nodes.reflector.run(stop.signal);
    while (calls.filter((call) => call.kind === "watch").length === watches) await new Promise((r) => setImmediate(r));
    stop.abort();
    await running;
  };
  const patches = (): ScriptedCall[] => calls.filter((call) => call.method === "PATCH");
  return { taints, judge, nodes, deliver, patches };
}

const firstOp = (call: ScriptedCall | undefined): unknown => (call?.body as unknown[] | undefined)?.[0];

describe("prevent/TaintJudge.view", () => {
  it("starts no NotReady time: a look a minute after another still finds the agent NotReady for no time", async () => {
    const clock = new FakeClock(NOW);
    const { judge, deliver } = setup(clock, { nodes: [node("node-a", "1")], report: true });
    await deliver();
    expect(judge.view("node-a")?.decision).to.deep.equal({ kind: "none", retryAfterMs: 30_000 });
    clock.advance(60_000);
    expect(judge.view("node-a")?.decision).to.deep.equal({ kind: "none", retryAfterMs: 30_000 });
  });

  it("counts the NotReady time on the monotonic clock: a wall clock set forward or back neither taints early nor late", async () => {
    for (const step of [3_600_000, -3_600_000]) {
      const clock = new FakeClock(NOW);
      const { taints, judge, deliver } = setup(clock, { nodes: [node("node-a", "1")], report: true });
      await deliver();
      await taints.reconcile("node-a"); // the reconcile's own sight starts the NotReady time
      clock.advance(10_000);
      clock.stepWallClock(step);
      expect(judge.view("node-a")?.decision, String(step)).to.deep.equal({ kind: "none", retryAfterMs: 20_000 });
      clock.advance(20_000);
      expect(judge.view("node-a")?.decision.kind, String(step)).to.equal("add");
    }
  });
});

describe("prevent/StartupTaints", () => {
  /** Both nodes' agents NotReady for --startup-taint-not-ready-after, as the reconciler has seen it. */
  const bothDue = async (clock: FakeClock, taints: StartupTaints) => {
    await taints.reconcile("node-a");
    await taints.reconcile("node-b");
    clock.advance(30_000);
  };

  it("counts a taint it added under the share cap until the watch delivers it, without writing into its cache", async () => {
    const clock = new FakeClock(NOW);
    const nodes = [node("node-a", "1"), node("node-b", "2")];
    const { taints, judge, deliver, patches, ...rest } = setup(clock, { nodes, policy: { maxShare: 0.5 } });
    await deliver();
    await bothDue(clock, taints);

    expect(await taints.reconcile("node-a")).to.deep.equal({ kind: "done" });
    expect(patches()).to.have.length(1);
    // The cache still shows node-a untainted (the watch has not delivered the write): the cap counts it anyway.
    expect(rest.nodes.store.get("node-a")?.resourceVersion).to.equal("1");
    expect(await taints.reconcile("node-b")).to.deep.equal({ kind: "done" });
    expect(judge.heldFor("share_cap")).to.deep.equal(["node-b"]);
    // node-a is not judged again on the version its write replaced.
    expect(await taints.reconcile("node-a")).to.deep.equal({ kind: "requeue", afterMs: 250 });
    expect(patches()).to.have.length(1);

    // Delivered: the cache counts it now, and node-a is judged again (nothing to do).
    await deliver([node("node-a", "3", [{ key: ISTIO, effect: "NoSchedule" }]), node("node-b", "2")]);
    expect(await taints.reconcile("node-b")).to.deep.equal({ kind: "done" });
    expect(judge.heldFor("share_cap")).to.deep.equal(["node-b"]);
    expect(await taints.reconcile("node-a")).to.deep.equal({ kind: "done" });
    expect(patches()).to.have.length(1);
  });

  it("tests the resourceVersion it judged; a refused write waits for a newer version in the cache, not re-read and sent", async () => {
    const clock = new FakeClock(NOW);
    let answer: ScriptedAnswer = { status: 422 };
    const { taints, deliver, patches } = setup(clock, { nodes: [node("node-a", "7")], patch: () => answer });
    await deliver();
    await taints.reconcile("node-a");
    clock.advance(30_000);

    expect(await taints.reconcile("node-a")).to.deep.equal({ kind: "requeue", afterMs: 250 });
    expect(patches()).to.have.length(1);
    expect(firstOp(patches()[0])).to.deep.equal({
      op: "test",
      path: "/metadata/resourceVersion",
      value: "7",
    });
    // Not judged again on the version refused (it would only be refused again), however often it is looked at.
    answer = { body: {} };
    expect(await taints.reconcile("node-a")).to.deep.equal({ kind: "requeue", afterMs: 250 });
    expect(patches()).to.have.length(1);
    // The watch delivers a newer version: judged on it, and written.
    await deliver([node("node-a", "8")]);
    expect(await taints.reconcile("node-a")).to.deep.equal({ kind: "done" });
    expect(firstOp(patches()[1])).to.deep.include({ value: "8" });
  });

  it("writes nothing when the Lease is not held at the moment of writing, and hands the node back", async () => {
    const clock = new FakeClock(NOW);
    const { taints, deliver, patches } = setup(clock, { nodes: [node("node-a", "1")], leading: () => false });
    await deliver();
    await taints.reconcile("node-a");
    clock.advance(30_000);
    expect(await taints.reconcile("node-a")).to.deep.equal({ kind: "requeue", afterMs: 0 });
    expect(patches()).to.deep.equal([]);
  });
});
