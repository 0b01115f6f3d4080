// PodCache (informer/pod-cache.ts) against a scripted API server: the namespace filter for several namespaces, the
// fixed order of its bookkeeping, and one detection per change shared by everything after it.
import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "chai";
import { Registry } from "prom-client";
import { parseConfig } from "../../../src/config/config.js";
import type { DetectContext } from "../../../src/detect/detect.js";
import { PodCache, type PodEvent } from "../../../src/informer/pod-cache.js";
import { reflectorSettings } from "../../../src/informer/reflector-settings.js";
import type { Logger } from "../../../src/observe/logger.js";
import { createMetrics } from "../../../src/observe/metrics.js";
import { Publisher } from "../../../src/util/publisher.js";
import { collectingLogger, silentLogger } from "../../support/loggers.js";
import { scriptedTransport } from "../../support/scripted-transport.js";
import { istioPodJson } from "../detect/raw-pod-fixture.js";

const pod = (namespace: string, name: string) => {
  const json = istioPodJson();
  return { ...json, metadata: { ...json.metadata, namespace, name, uid: `uid-${namespace}-${name}` } };
};
const CONTEXT: DetectContext = { nowMs: 0, namespaceLabel: () => undefined };

function start(args: string[], items: unknown[], options: { safetyThrows?: boolean; log?: Logger } = {}) {
  const { config } = parseConfig(["run", "--watch-list=false", ...args], {});
  const { transport } = scriptedTransport({
    request: () => ({ body: { items, metadata: { resourceVersion: "10" } } }),
  });
  const metrics = createMetrics(new Registry(), { ruleNames: config.rules.map((rule) => rule.name), version: "test" });
  const calls: string[] = [];
  const namespaces = new Publisher<{ key: string; previous: undefined; current: undefined }>();
  const cache = new PodCache({
    config,
    settings: reflectorSettings(config, transport),
    metrics,
    log: options.log ?? silentLogger(),
    context: () => CONTEXT,
    enrolment: {
      observe: (facts) => calls.push(`enrolment ${facts.name}`),
      forget: (uid) => calls.push(`forget ${uid}`),
    },
    namespaces,
    safety: (event) => {
      calls.push(`safety ${event.change.key} ${event.verdict?.broken}`);
      seen.push(event);
      if (options.safetyThrows) throw new Error("safety bug");
    },
  });
  const seen: PodEvent[] = [];
  return { cache, calls, metrics, seen, namespaces };
}

async function listOnce(cache: PodCache): Promise<void> {
  const stop = new AbortController();
  const running = cache.reflector.run(stop.signal);
  await cache.reflector.waitForSync(stop.signal);
  await sleep(1);
  stop.abort();
  await running;
}

describe("informer/PodCache", () => {
  it("keeps only the pods of the listed namespaces when --namespaces names two or more", async () => {
    const { cache } = start(["--namespaces=shop,bank"], [pod("shop", "a"), pod("bank", "b"), pod("other", "c")]);
    await listOnce(cache);
    expect([...cache.values()].map((facts) => `${facts.namespace}/${facts.name}`).sort()).to.deep.equal([
      "bank/b",
      "shop/a",
    ]);
  });

  it("runs its bookkeeping in a fixed order, whoever subscribed first: enrolment clocks, safety, then subscribers", async () => {
    const { cache, calls, metrics } = start([], [pod("shop", "a")]);
    cache.subscribe(({ change }) => calls.push(`subscriber ${change.key}`));
    await listOnce(cache);
    expect(calls).to.deep.equal(["enrolment a", "safety shop/a true", "subscriber shop/a"]);
    expect((await metrics.cachePods.get()).values[0]?.value, "the cache-size gauge").to.equal(1);
  });

  it("detects once per change: safety and every subscriber get the same verdict object", async () => {
    const { cache, seen } = start([], [pod("shop", "a")]);
    cache.subscribe((event) => seen.push(event));
    cache.subscribe((event) => seen.push(event));
    await listOnce(cache);
    expect(seen).to.have.length(3);
    expect(seen[0]?.verdict).to.include({ broken: true, rule: "istio" });
    expect(seen[1]?.verdict).to.equal(seen[0]?.verdict);
    expect(seen[2]?.verdict).to.equal(seen[0]?.verdict);
  });

  it("a namespace change looks at the enrolment clocks of its pods only", async () => {
    const { cache, calls, namespaces } = start([], [pod("shop", "a"), pod("bank", "b")]);
    await listOnce(cache);
    calls.length = 0;
    namespaces.publish({ key: "shop", previous: undefined, current: undefined });
    expect(calls).to.deep.equal(["enrolment a"]);
  });

  it("a throw in the safety bookkeeping or in a subscriber: the subscribers still hear the change; counted and logged once with the pod's key", async () => {
    const { logger, lines } = collectingLogger({ level: "error" });
    const { cache, calls, metrics } = start([], [pod("shop", "a")], { safetyThrows: true, log: logger });
    cache.subscribe(() => {
      throw new Error("trigger bug");
    });
    cache.subscribe(({ change }) => calls.push(`subscriber ${change.key}`));
    await listOnce(cache);
    expect(calls).to.deep.equal(["enrolment a", "safety shop/a true", "subscriber shop/a"]);
    expect((await metrics.listenerFailures.get()).values).to.deep.equal([{ value: 1, labels: { resource: "pods" } }]);
    const logged = lines.map((line) => JSON.parse(line) as { msg: string; key?: string; error?: string });
    expect(logged.map((line) => [line.msg, line.key])).to.deep.equal([["listener failed", "shop/a"]]);
    expect(logged[0]?.error).to.include("2 listeners failed").and.include("safety bug").and.include("trigger bug");
    expect((await metrics.watchRestarts.get()).values.filter((v) => v.value > 0)).to.deep.equal([]);
  });
});
