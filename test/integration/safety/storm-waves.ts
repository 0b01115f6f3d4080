// Waves of breakage on one node for the storm-breaker tests: healthy meshed pods of one ReplicaSet, broken on cue,
// healthy replacements as the ReplicaSet controller would make them, and the controller's deletes from the audit log.
import type { CoreV1Api } from "@kubernetes/client-node";
import { controllerDeletes } from "../../harness/audit-log.js";
import { createPodInState } from "../../harness/broken-pods.js";
import { VALIDATOR, validatorStatus, writePodStatus } from "../../harness/pod-fixtures.js";
import { controlPlane } from "../../harness/shared-control-plane.js";

const HEALTHY = { validator: { kind: "succeeded" }, phase: "Running" } as const;

export class NodeWave {
  readonly #api: CoreV1Api;
  readonly #namespace: string;
  readonly node: string;
  #replacements = 0;

  constructor(api: CoreV1Api, namespace: string, node: string) {
    this.#api = api;
    this.#namespace = namespace;
    this.node = node;
  }

  /** Names of `count` pods on the node. */
  names(count: number): string[] {
    return Array.from({ length: count }, (_, i) => `${this.node}-pod-${i}`);
  }

  /** Creates the pods, every one healthy (validator passed, Running). */
  async createHealthy(names: readonly string[]): Promise<void> {
    for (const name of names) await this.#create(name);
  }

  /** The validator of each named pod fails with Istio's exit code, as the kubelet reports it. */
  async break(names: readonly string[]): Promise<void> {
    const status = validatorStatus(VALIDATOR.istio.container, {
      kind: "crashloop",
      exitCode: VALIDATOR.istio.exitCode,
    });
    await Promise.all(
      names.map((name) =>
        writePodStatus(
          this.#api,
          { namespace: this.#namespace, name },
          { phase: "Pending", initContainerStatuses: [status] },
        ),
      ),
    );
  }

  /** A healthy pod of the same ReplicaSet, as its controller would create after a delete. */
  async replace(): Promise<void> {
    await this.#create(`${this.node}-new-${this.#replacements++}`);
  }

  /** This node's pods the controller deleted (HTTP 200), in order, with when the server answered. */
  deletes(): { name: string; uid: string; atMs: number }[] {
    return controllerDeletes(controlPlane().auditLogPath, this.#namespace)
      .filter((event) => event.responseStatus?.code === 200 && event.objectRef?.name?.startsWith(`${this.node}-`))
      .map((event) => ({
        name: event.objectRef?.name ?? "",
        uid: String((event.requestObject?.preconditions as { uid?: string } | undefined)?.uid),
        atMs: Date.parse(event.stageTimestamp),
      }));
  }

  async #create(name: string): Promise<void> {
    await createPodInState(this.#api, { namespace: this.#namespace, name, nodeName: this.node }, HEALTHY);
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
