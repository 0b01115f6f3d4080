// The composition root (cli/compose.ts) against a scripted API server: which caches it builds for which flags, that
// a broken pod in the pod list flows through the pod cache, the triggers and the workers to one DELETE with
// preconditions, and that explain's composition (composeQuery) judges from its caches without a queue or a write.
// The real-API-server proofs are in test/integration (controller/delete-mode, safety/scan, safety/explain).
import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "chai";
import { Registry } from "prom-client";
import { composeController, composeQuery, NEVER_LEADS } from "../../../src/cli/compose.js";
import { parseConfig } from "../../../src/config/config.js";
import type { RunningCache } from "../../../src/informer/reflector.js";
import { createMetrics } from "../../../src/observe/metrics.js";
import { silentLogger } from "../../support/loggers.js";
import { type ScriptedCall, scriptedTransport } from "../../support/scripted-transport.js";
import { istioPodJson } from "../detect/raw-pod-fixture.js";

const brokenPod = istioPodJson();
const POD_PATH = `/api/v1/namespaces/${brokenPod.metadata.namespace}/pods/${brokenPod.metadata.name}`;

/** Lists answer by path: the broken pod for the pod list, nothing for anything else (agents, nodes, namespaces). */
function cluster() {
  return scriptedTransport({
    request: (call) => {
      const list = call.kind === "request" && call.method === "GET";
      const items = list && call.path === "/api/v1/pods" && call.query.labelSelector === undefined ? [brokenPod] : [];
      return { body: list ? { items, metadata: { resourceVersion: "10" } } : {} };
    },
  });
}

function compose(args: string[]) {
  const { config } = parseConfig(["run", "--watch-list=false", ...args], {});
  const { transport, calls } = cluster();
  const metrics = createMetrics(new Registry(), { ruleNames: config.rules.map((rule) => rule.name), version: "test" });
  return { config, transport, calls, metrics };
}

const lists = (calls: readonly ScriptedCall[]) =>
  calls
    .filter((call) => call.kind === "request" && call.method === "GET")
    .map((call) => `${call.path}${call.query.labelSelector ? `?${call.query.labelSelector}` : ""}`)
    .sort();
const writes = (calls: readonly ScriptedCall[]) => calls.filter((call) => call.method !== "GET");

async function until(what: string, done: () => boolean): Promise<void> {
  for (let waited = 0; !done(); waited += 10) {
    if (waited > 5_000) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

async function listOnce(caches: readonly RunningCache[]): Promise<void> {
  const stop = new AbortController();
  const running = caches.map((cache) => cache.run(stop.signal));
  await Promise.all(caches.map((cache) => cache.waitForSync(stop.signal)));
  stop.abort();
  await Promise.all(running);
}

describe("cli/compose", () => {
  it("run: one cache per watched thing, each listed by the manager (pods, CNI agents, Istio's settings; nodes with startup taints)", async () => {
    const ignore = "--istio-repair=ignore";
    for (const [args, expected] of [
      [[], ["/api/v1/configmaps", "/api/v1/pods", "/api/v1/pods?k8s-app=istio-cni-node", "/apis/apps/v1/daemonsets"]],
      [
        ["--cni-agent-namespace=istio=kube-system"],
        [
          "/api/v1/namespaces/kube-system/configmaps",
          "/api/v1/namespaces/kube-system/pods?k8s-app=istio-cni-node",
          "/api/v1/pods",
          "/apis/apps/v1/namespaces/kube-system/daemonsets",
        ],
      ],
      [[ignore], ["/api/v1/pods", "/api/v1/pods?k8s-app=istio-cni-node"]],
      [[ignore, "--cni-agent-gate=off"], ["/api/v1/pods"]],
      [
        [ignore, "--startup-taint=bootstrap-only"],
        ["/api/v1/nodes", "/api/v1/pods", "/api/v1/pods?k8s-app=istio-cni-node"],
      ],
    ] as const) {
      const { config, transport, calls, metrics } = compose([...args]);
      const parts = composeController(config, transport, metrics, silentLogger(), {
        leadership: NEVER_LEADS,
      });
      parts.manager.start();
      await parts.manager.waitForSync(new AbortController().signal);
      await parts.manager.stop();
      expect(lists(calls), args.join(" ") || "defaults").to.deep.equal(expected);
      expect(parts.query.size).to.equal(1);
    }
  });

  it("run: a broken pod in the list goes cache → trigger → worker → one DELETE with UID and resourceVersion preconditions", async () => {
    const { config, transport, calls, metrics } = compose(["--cni-agent-gate=off"]);
    const parts = composeController(config, transport, metrics, silentLogger());
    parts.manager.start();
    await until("the DELETE", () => calls.some((call) => call.method === "DELETE"));
    await parts.manager.stop();
    const deletes = calls.filter((call) => call.method === "DELETE");
    expect(deletes.map((call) => call.path)).to.deep.equal([POD_PATH]);
    expect(deletes[0]?.body).to.deep.include({
      preconditions: { uid: brokenPod.metadata.uid, resourceVersion: brokenPod.metadata.resourceVersion },
    });
  });

  it("run without leadership: the caches fill and the query judges, but nothing is written", async () => {
    const { config, transport, calls, metrics } = compose(["--cni-agent-gate=off"]);
    const parts = composeController(config, transport, metrics, silentLogger(), {
      leadership: NEVER_LEADS,
    });
    parts.manager.start();
    await parts.manager.waitForSync(new AbortController().signal);
    await sleep(50);
    await parts.manager.stop();
    const pod = [...parts.query.pods()][0];
    if (pod === undefined) throw new Error("the pod is not in the cache");
    expect(parts.query.judge(pod, parts.query.dryRun()).decision).to.include({ kind: "act", action: "delete" });
    expect(writes(calls)).to.deep.equal([]);
  });

  it("explain (composeQuery): the same caches and judgement, no queue, no worker, no write", async () => {
    const { config, transport, calls, metrics } = compose(["--istio-repair=ignore", "--startup-taint=bootstrap-only"]);
    const { caches, query } = composeQuery(config, transport, metrics, silentLogger(), { agentReadyBasis: "claimed" });
    expect(caches).to.have.length(3);
    await listOnce(caches);
    expect(lists(calls)).to.deep.equal(["/api/v1/nodes", "/api/v1/pods", "/api/v1/pods?k8s-app=istio-cni-node"]);
    const pod = query.pod(`${brokenPod.metadata.namespace}/${brokenPod.metadata.name}`);
    if (pod === undefined) throw new Error("the pod is not in the cache");
    // No CNI agent on its node: held by the gate, as run would.
    expect(query.judge(pod, query.dryRun()).decision).to.include({ kind: "hold", reason: "cni_agent_not_ready" });
    // The pod cache told the storm breaker of it: broken while no agent is Ready there, so explained, not counted.
    expect(query.storm(pod.nodeName ?? "").node).to.match(
      /^0 of 1 meshed pods broken .*1 more broken by a CNI agent outage/,
    );
    expect(writes(calls)).to.deep.equal([]);
  });

  it("ambient rules add the namespace watch; Istio's settings are read under the istio rule only (not for linkerd)", async () => {
    const ambient = compose(["--preset=istio-ambient", "--cni-agent-gate=off"]);
    const ambientCaches = composeQuery(ambient.config, ambient.transport, ambient.metrics, silentLogger()).caches;
    await listOnce(ambientCaches);
    expect(lists(ambient.calls)).to.include("/api/v1/namespaces");
    const linkerd = compose(["--preset=linkerd", "--cni-agent-gate=off"]);
    const linkerdCaches = composeQuery(linkerd.config, linkerd.transport, linkerd.metrics, silentLogger()).caches;
    expect(linkerdCaches).to.have.length(1);
  });
});
