// The baseline: a repair controller written the way @kubernetes/client-node's docs show an informer
// (examples/typescript/informer): stock makeInformer over all pods, whole V1Pod objects in its cache,
// restart after 5 s on error, and the repair done from the event handler with a precondition DELETE.
// Run: KUBECONFIG=... node dist/bench/baseline/controller.js; BASELINE_FIELD_SELECTOR=spec.nodeName=X watches one
// node's pods (the per-node runs).
import { ApiException, CoreV1Api, KubeConfig, makeInformer, type V1Pod } from "@kubernetes/client-node";
import { isBroken } from "./detect.js";

const kc = new KubeConfig();
kc.loadFromDefault();
const k8sApi = kc.makeApiClient(CoreV1Api);

const fieldSelector = process.env.BASELINE_FIELD_SELECTOR || undefined;
const listFn = () => k8sApi.listPodForAllNamespaces(fieldSelector ? { fieldSelector } : {});
// makeInformer takes no field selector; its watch keeps a query already in the path.
const watchPath = fieldSelector ? `/api/v1/pods?fieldSelector=${encodeURIComponent(fieldSelector)}` : "/api/v1/pods";
const informer = makeInformer(kc, watchPath, listFn);

async function repair(pod: V1Pod): Promise<void> {
  if (!isBroken(pod)) return;
  const { name = "", namespace = "", uid = "", resourceVersion = "" } = pod.metadata ?? {};
  try {
    await k8sApi.deleteNamespacedPod({
      name,
      namespace,
      body: { preconditions: { uid, resourceVersion } },
    });
    console.log(JSON.stringify({ msg: "deleted broken pod", namespace, name, uid }));
  } catch (err) {
    // 404: already gone; 409: changed or replaced since this event: nothing to do.
    if (err instanceof ApiException && (err.code === 404 || err.code === 409)) return;
    console.error(JSON.stringify({ msg: "delete failed", namespace, name, error: String(err) }));
  }
}

informer.on("add", (pod) => void repair(pod));
informer.on("update", (pod) => void repair(pod));
informer.on("error", (err) => {
  console.error(JSON.stringify({ msg: "informer error", error: String(err) }));
  // Restart informer after 5sec (as in the client-node example).
  setTimeout(() => void informer.start(), 5000);
});

process.once("SIGTERM", () => {
  void informer.stop().then(() => process.exit(0));
});

await informer.start();
console.log(JSON.stringify({ msg: "synced", pods: informer.list().length }));
