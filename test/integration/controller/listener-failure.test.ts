// A bug in one listener of the pod watch, against the real API server (issue 32): the pod cache's safety bookkeeping
// and one subscriber throw on every change; the subscriber after them (where the triggers sit) still hears each
// change with its verdict, the watch is never restarted for it (cni_repair_watch_restarts_total reason "error" stays
// 0, and no relist), and each change is counted once in cni_repair_listener_failures_total and logged with the pod's
// namespace/name.
import { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { Registry } from "prom-client";
import { parseConfig } from "../../../src/config/config.js";
import { PodCache, type PodEvent } from "../../../src/informer/pod-cache.js";
import { reflectorSettings } from "../../../src/informer/reflector-settings.js";
import { KubeConfigCredentials } from "../../../src/kube/kubeconfig-credentials.js";
import { KubeTransport } from "../../../src/kube/transport.js";
import { createMetrics } from "../../../src/observe/metrics.js";
import { createPodInState } from "../../harness/broken-pods.js";
import { metricValue } from "../../harness/metrics-text.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { waitFor } from "../../harness/wait.js";
import { collectingLogger } from "../../support/loggers.js";

describe("pod watch: a throwing listener poisons nothing (real API server)", () => {
  it("the listener after the throwers hears every change, the watch is never restarted for it, each throw is counted and logged with the pod's key", async () => {
    const api = controlPlane().kubeConfig().makeApiClient(CoreV1Api);
    const namespace = await createTestNamespace(api, "listener");
    const { config } = parseConfig(
      ["run", `--kubeconfig=${controlPlane().kubeconfigPath}`, `--field-selector=metadata.namespace=${namespace}`],
      {},
    );
    const registry = new Registry();
    const metrics = createMetrics(registry, { ruleNames: config.rules.map((rule) => rule.name), version: "test" });
    const { logger, lines } = collectingLogger({ level: "warn" });
    const transport = new KubeTransport(new KubeConfigCredentials(controlPlane().kubeConfig()), {
      userAgent: "cni-repair/test",
    });
    const cache = new PodCache({
      config,
      settings: reflectorSettings(config, transport),
      metrics,
      log: logger,
      context: () => ({ nowMs: Date.now(), namespaceLabel: () => undefined }),
      enrolment: { observe: () => {}, forget: () => {} },
      safety: () => {
        throw new Error("a bug in the safety bookkeeping");
      },
    });
    cache.subscribe(() => {
      throw new Error("a bug in a subscriber");
    });
    const heard: PodEvent[] = [];
    cache.subscribe((event) => heard.push(event));
    const heardOf = (name: string) => heard.filter((event) => event.change.key === `${namespace}/${name}`);

    const stop = new AbortController();
    const running = cache.reflector.run(stop.signal);
    try {
      // One pod in the initial list, then two more and a deletion by watch events.
      await createPodInState(api, { namespace, name: "listed" });
      await cache.reflector.waitForSync(stop.signal);
      await createPodInState(api, { namespace, name: "watched-1" });
      await createPodInState(api, { namespace, name: "watched-2" });
      await api.deleteNamespacedPod({ namespace, name: "watched-1", gracePeriodSeconds: 0 });
      await waitFor(
        "the deletion of watched-1 to reach the last listener",
        () => heardOf("watched-1").some((e) => e.change.current === undefined) && heardOf("watched-2").length > 0,
        { timeoutMs: 10_000 },
      );
      // Every write came through, in order: created (then its status written, broken), and watched-1's deletion.
      expect(heardOf("listed").at(-1)?.verdict?.broken).to.equal(true);
      expect(heardOf("watched-2").at(-1)?.verdict?.broken).to.equal(true);
      expect(heardOf("watched-1").at(-1)?.change.current).to.equal(undefined);

      const text = await registry.metrics();
      expect(metricValue(text, "cni_repair_watch_restarts_total", { resource: "pods", reason: "error" })).to.equal(0);
      expect(metricValue(text, "cni_repair_watch_restarts_total", { resource: "pods", reason: "gone" })).to.equal(0);
      expect(metricValue(text, "cni_repair_listener_failures_total", { resource: "pods" })).to.equal(heard.length);
      const failures = lines
        .map((line) => JSON.parse(line) as { msg: string; key?: string; error?: string })
        .filter((line) => line.msg === "listener failed");
      expect(failures.map((line) => line.key)).to.deep.equal(heard.map((event) => event.change.key));
      expect(failures[0]?.error).to.include("a bug in the safety bookkeeping").and.include("a bug in a subscriber");
      expect(lines.filter((line) => line.includes("watch restarted"))).to.deep.equal([]);
    } finally {
      stop.abort();
      await running;
      await transport.close();
    }
  });
});
