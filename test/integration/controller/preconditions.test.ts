// Precondition safety against the real API server: a reconcile that judged stale facts deletes nothing.
// The reconciler runs in-process here so the test can hand it facts that are stale on purpose.
import { CoreV1Api, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { expect } from "chai";
import type { Registry } from "prom-client";
import type { ReconcileResult } from "../../../src/controller/reconcile-result.js";
import type { Reconciler } from "../../../src/controller/reconciler.js";
import { podKey } from "../../../src/detect/facts.js";
import { presetRule } from "../../../src/detect/presets.js";
import type { Rule } from "../../../src/detect/rule.js";
import { factsSchema, toPodFacts } from "../../../src/detect/to-pod-facts.js";
import type { PodStore } from "../../../src/informer/pod-store.js";
import { KubeConfigCredentials } from "../../../src/kube/kubeconfig-credentials.js";
import { KubeTransport } from "../../../src/kube/transport.js";
import { loggedControllerDeletes } from "../../harness/audit-log.js";
import { createPodInState } from "../../harness/broken-pods.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { testReconciler } from "../../support/test-reconciler.js";

const rules: Rule[] = [presetRule("istio") as Rule];
const schema = factsSchema(rules);

describe("precondition safety", () => {
  let api: CoreV1Api;
  let namespace: string;
  let transport: KubeTransport;
  let registry: Registry;
  let store: PodStore;
  let reconciler: Reconciler;

  beforeEach(async () => {
    const kubeConfig = controlPlane().kubeConfig();
    api = kubeConfig.makeApiClient(CoreV1Api);
    namespace = await createTestNamespace(api);
    transport = new KubeTransport(new KubeConfigCredentials(kubeConfig), { userAgent: "cni-repair/test" });
    // Limits and gates off: this test is about preconditions only.
    ({ reconciler, store, registry } = testReconciler({ transport, rules }));
  });

  afterEach(async () => {
    await transport.close();
  });

  /** Judges the pod as it is now: its facts go into the reconciler's cache. */
  const judge = async (name: string): Promise<string> => {
    const facts = toPodFacts(await api.readNamespacedPod({ namespace, name }), schema);
    if (!facts) throw new Error("no facts");
    store.upsert(facts);
    return podKey(namespace, name);
  };
  const count = async (result: "skip" | "fail" | "success") => {
    const metric = await registry.getSingleMetric("cni_repair_pods_repaired_total")?.get();
    return metric?.values.find((v) => v.labels.type === "delete" && v.labels.result === result)?.value ?? 0;
  };
  const isMarkedForDeletion = async (name: string) =>
    (await api.readNamespacedPod({ namespace, name })).metadata?.deletionTimestamp !== undefined;

  it("does not delete a pod that changed since it was judged: 409 is a skip and the key is looked at again", async () => {
    await createPodInState(api, { namespace, name: "changed" });
    const key = await judge("changed");
    await api.patchNamespacedPod(
      { namespace, name: "changed", body: { metadata: { labels: { touched: "yes" } } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );

    const result: ReconcileResult = await reconciler.reconcile(key);

    expect(result.kind).to.equal("requeue");
    expect(await isMarkedForDeletion("changed")).to.equal(false);
    expect(await count("skip")).to.equal(1);
    expect(await count("fail")).to.equal(0);
    const [refused] = await loggedControllerDeletes(controlPlane().auditLogPath, namespace, 1);
    expect(refused?.responseStatus?.code).to.equal(409);

    // With fresh facts the same pod is deleted.
    await judge("changed");
    expect((await reconciler.reconcile(key)).kind).to.equal("done");
    expect(await isMarkedForDeletion("changed")).to.equal(true);
    expect(await count("success")).to.equal(1);
  });

  it("does not delete a replacement with the same name (new UID): skip, and the new pod survives", async () => {
    await createPodInState(api, { namespace, name: "replaced" });
    const key = await judge("replaced");
    await api.deleteNamespacedPod({ namespace, name: "replaced", body: { gracePeriodSeconds: 0 } });
    const replacement = await createPodInState(api, { namespace, name: "replaced" });

    expect((await reconciler.reconcile(key)).kind).to.equal("requeue");

    const survivor = await api.readNamespacedPod({ namespace, name: "replaced" });
    expect(survivor.metadata?.uid).to.equal(replacement.metadata?.uid);
    expect(survivor.metadata?.deletionTimestamp).to.equal(undefined);
    expect(await count("skip")).to.equal(1);
    expect(
      (await loggedControllerDeletes(controlPlane().auditLogPath, namespace, 1)).map((e) => e.responseStatus?.code),
    ).to.deep.equal([409]);
  });

  it("counts a pod that is already gone (404) as a skip, not a failure", async () => {
    await createPodInState(api, { namespace, name: "gone" });
    const key = await judge("gone");
    await api.deleteNamespacedPod({ namespace, name: "gone", body: { gracePeriodSeconds: 0 } });

    expect((await reconciler.reconcile(key)).kind).to.equal("done");
    expect(await count("skip")).to.equal(1);
    expect(await count("fail")).to.equal(0);
  });
});
