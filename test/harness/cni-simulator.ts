// The mesh's CNI plugin and the kubelet's view of the validator, for kwok's fake nodes. When a pod's sandbox is
// set up on a node, the simulator looks at that node's CNI agent: Ready, and the pod gets a working sandbox
// (kwok then starts it); down, and the validator init container fails with the mesh's exit code, written as
// the kubelet would: a restart loop (restartCount grows, Init:CrashLoopBackOff), or with restartPolicy Never a
// Failed pod. A pod keeps the sandbox it was given until it is deleted, as on a real node.
import { setTimeout as sleep } from "node:timers/promises";
import {
  CoreV1Api,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1ContainerStatus,
  type V1Pod,
  Watch,
} from "@kubernetes/client-node";
import { VALIDATOR, validatorStatus, writePodStatus } from "./pod-fixtures.js";

/** Written on every pod once its sandbox exists; kwok's pod-ready stage starts only "ok" pods. */
export const SANDBOX_ANNOTATION = "e2e.cni-repair.test/sandbox";

export type CniState = "ready" | "down";

/** A pod the simulator gave a broken sandbox: its validator failed. */
export type BrokenPodRecord = {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly node: string;
  /** When its failed validator status was first written (ms since the epoch). */
  readonly brokenAtMs: number;
  readonly restartPolicy: string;
};

type Looping = { namespace: string; name: string; container: string; exitCode: number; restarts: number };

export type CniSimulatorOptions = {
  /** How often a broken validator "restarts" (and fails again), changing the pod's status; 0: never. */
  readonly restartLoopMs?: number;
};

export class CniSimulator {
  /** Every pod UID given a broken sandbox, in the order it happened. */
  readonly broken = new Map<string, BrokenPodRecord>();
  /** Every pod UID given a working sandbox. */
  readonly healthy = new Set<string>();
  readonly #kubeConfig: KubeConfig;
  readonly #api: CoreV1Api;
  readonly #nodes = new Map<string, CniState>();
  /** UID → the sandbox decided for it, so a pod is decided once, however many events show it undecided. */
  readonly #decided = new Map<string, CniState>();
  readonly #looping = new Map<string, Looping>();
  readonly #pending = new Set<Promise<unknown>>();
  readonly #abort = new AbortController();
  readonly #errors: string[] = [];
  #running: Promise<void> | undefined;
  #loopTimer: NodeJS.Timeout | undefined;

  private constructor(kubeConfig: KubeConfig) {
    this.#kubeConfig = kubeConfig;
    this.#api = kubeConfig.makeApiClient(CoreV1Api);
  }

  /** Starts watching every pod of the cluster; every node's CNI is Ready until told otherwise. */
  static start(kubeConfig: KubeConfig, options: CniSimulatorOptions = {}): CniSimulator {
    const simulator = new CniSimulator(kubeConfig);
    simulator.#running = simulator.#run();
    const loopMs = options.restartLoopMs ?? 3_000;
    if (loopMs > 0) simulator.#loopTimer = setInterval(() => simulator.#restartLoop(), loopMs);
    return simulator;
  }

  /** Sets the CNI on the node: pods whose sandbox is set up from now on get this. */
  setNode(node: string, state: CniState): void {
    this.#nodes.set(node, state);
  }

  nodeState(node: string): CniState {
    return this.#nodes.get(node) ?? "ready";
  }

  /** Broken pods (in the namespace, if given) in the order they broke. */
  brokenIn(namespace?: string): BrokenPodRecord[] {
    return [...this.broken.values()].filter((pod) => namespace === undefined || pod.namespace === namespace);
  }

  /** Failed writes other than the pod being gone or the server being down (those are expected in fault tests). */
  get errors(): readonly string[] {
    return this.#errors;
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    clearInterval(this.#loopTimer);
    await this.#running;
    await Promise.allSettled([...this.#pending]);
  }

  /** List, then watch from the list's version; on any end or error, list again (the handling is idempotent). */
  async #run(): Promise<void> {
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      try {
        const list = await this.#api.listPodForAllNamespaces();
        for (const pod of list.items) this.#see("ADDED", pod);
        await this.#watch(list.metadata?.resourceVersion ?? "");
      } catch {
        // The API server is down or restarting: try again shortly.
      }
      await sleep(250, undefined, { signal }).catch(() => {});
    }
  }

  async #watch(resourceVersion: string): Promise<void> {
    const signal = this.#abort.signal;
    if (signal.aborted) return;
    await new Promise<void>((resolve) => {
      let request: AbortController | undefined;
      const onAbort = () => request?.abort();
      signal.addEventListener("abort", onAbort, { once: true });
      const finish = () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      };
      new Watch(this.#kubeConfig)
        .watch(
          "/api/v1/pods",
          { resourceVersion, allowWatchBookmarks: true },
          (type: string, pod: V1Pod) => this.#see(type, pod),
          finish,
        )
        .then((controller) => {
          request = controller;
          if (signal.aborted) controller.abort();
        }, finish);
    });
  }

  #see(type: string, pod: V1Pod): void {
    const uid = pod.metadata?.uid;
    if (type === "BOOKMARK" || type === "ERROR" || !uid) return;
    if (type === "DELETED" || pod.metadata?.deletionTimestamp) {
      this.#looping.delete(uid);
      return;
    }
    const node = pod.spec?.nodeName;
    // Not bound yet; or a CNI agent (DaemonSet) pod, whose readiness the tests write themselves.
    if (!node || pod.metadata?.ownerReferences?.some((owner) => owner.kind === "DaemonSet")) return;
    if (this.#decided.has(uid)) return;
    if (pod.metadata?.annotations?.[SANDBOX_ANNOTATION] !== undefined) return;
    const state = this.nodeState(node);
    this.#decided.set(uid, state);
    this.#track(state === "ready" ? this.#giveWorkingSandbox(pod, uid) : this.#giveBrokenSandbox(pod, uid, node));
  }

  async #giveWorkingSandbox(pod: V1Pod, uid: string): Promise<void> {
    this.healthy.add(uid);
    await this.#annotate(pod, "ok");
  }

  async #giveBrokenSandbox(pod: V1Pod, uid: string, node: string): Promise<void> {
    const validator = Object.values(VALIDATOR).find((v) =>
      pod.spec?.initContainers?.some((container) => container.name === v.container),
    );
    // A pod without the mesh's validator does not notice that the mesh's rules are missing.
    if (!validator) {
      this.healthy.add(uid);
      await this.#annotate(pod, "ok");
      return;
    }
    const namespace = pod.metadata?.namespace ?? "";
    const name = pod.metadata?.name ?? "";
    const restartPolicy = pod.spec?.restartPolicy ?? "Always";
    if (!(await this.#annotate(pod, "broken"))) return;
    const never = restartPolicy === "Never";
    const status = never
      ? validatorStatus(validator.container, { kind: "failed", exitCode: validator.exitCode })
      : {
          ...validatorStatus(validator.container, { kind: "crashloop", exitCode: validator.exitCode }),
          restartCount: 1,
        };
    // Record first: the controller may act the moment the status lands.
    this.broken.set(uid, { namespace, name, uid, node, brokenAtMs: Date.now(), restartPolicy });
    const written = await this.#writeStatus({ namespace, name }, never ? "Failed" : "Pending", status);
    if (!written) {
      this.broken.delete(uid);
      return;
    }
    if (!never) {
      this.#looping.set(uid, {
        namespace,
        name,
        container: validator.container,
        exitCode: validator.exitCode,
        restarts: 1,
      });
    }
  }

  /** One more failed run of every looping validator: a new status, so a new resourceVersion. */
  #restartLoop(): void {
    for (const [uid, pod] of this.#looping) {
      pod.restarts++;
      const status = {
        ...validatorStatus(pod.container, { kind: "crashloop", exitCode: pod.exitCode }),
        restartCount: pod.restarts,
      };
      this.#track(
        this.#writeStatus(pod, "Pending", status).then((written) => {
          if (!written) this.#looping.delete(uid);
        }),
      );
    }
  }

  /** False when the pod is gone (or the write failed); the sandbox is then moot. */
  async #annotate(pod: V1Pod, value: "ok" | "broken"): Promise<boolean> {
    return await this.#attempt(() =>
      this.#api.patchNamespacedPod(
        {
          name: pod.metadata?.name ?? "",
          namespace: pod.metadata?.namespace ?? "",
          body: { metadata: { annotations: { [SANDBOX_ANNOTATION]: value } } },
        },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      ),
    );
  }

  async #writeStatus(
    pod: { namespace: string; name: string },
    phase: string,
    validator: V1ContainerStatus,
  ): Promise<boolean> {
    return await this.#attempt(() => writePodStatus(this.#api, pod, { phase, initContainerStatuses: [validator] }));
  }

  /** Retries while the API server is unreachable (a fault test may have killed it); false if the pod is gone. */
  async #attempt(call: () => Promise<unknown>): Promise<boolean> {
    for (let attempt = 0; attempt < 120 && !this.#abort.signal.aborted; attempt++) {
      try {
        await call();
        return true;
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (code === 404) return false;
        if (typeof code === "number" && code !== 409 && code < 500 && code !== 429) {
          this.#errors.push(String((error as Error).message).slice(0, 300));
          return false;
        }
        await sleep(250, undefined, { signal: this.#abort.signal }).catch(() => {});
      }
    }
    return false;
  }

  #track(work: Promise<unknown>): void {
    const tracked = work
      .catch((error) => this.#errors.push(String(error)))
      .finally(() => this.#pending.delete(tracked));
    this.#pending.add(tracked);
  }
}
