// Finishes graceful pod deletions in a namespace the way a kubelet would (there is none here): a pod that
// gets a deletionTimestamp is removed shortly after, so "terminating" pods do not pile up for 30 s.
import { CoreV1Api, type KubeConfig, type V1Pod, Watch } from "@kubernetes/client-node";
import { statusOf } from "./api-errors.js";

export class FakeKubelet {
  readonly #api: CoreV1Api;
  #abort: AbortController | undefined;
  readonly #pending = new Set<Promise<unknown>>();

  private constructor(api: CoreV1Api) {
    this.#api = api;
  }

  /** Starts watching the namespace; pods marked for deletion are removed after `afterMs`. */
  static async start(kubeConfig: KubeConfig, namespace: string, afterMs = 200): Promise<FakeKubelet> {
    const kubelet = new FakeKubelet(kubeConfig.makeApiClient(CoreV1Api));
    kubelet.#abort = await new Watch(kubeConfig).watch(
      `/api/v1/namespaces/${namespace}/pods`,
      {},
      (_type: string, pod: V1Pod) => {
        const { deletionTimestamp, name, uid } = pod.metadata ?? {};
        if (deletionTimestamp && name && uid) kubelet.#finish({ name, namespace, uid }, afterMs);
      },
      () => {},
    );
    return kubelet;
  }

  async stop(): Promise<void> {
    this.#abort?.abort();
    await Promise.all(this.#pending);
  }

  /** The UID precondition keeps a same-name replacement (StatefulSet) safe. */
  #finish(pod: { name: string; namespace: string; uid: string }, afterMs: number): void {
    const body = { gracePeriodSeconds: 0, preconditions: { uid: pod.uid } };
    const done = new Promise((resolve) => setTimeout(resolve, afterMs))
      .then(() => statusOf(this.#api.deleteNamespacedPod({ name: pod.name, namespace: pod.namespace, body })))
      .finally(() => this.#pending.delete(done));
    this.#pending.add(done);
  }
}
