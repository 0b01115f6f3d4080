// The demo's cluster: three nodes with mesh CNI agents (node-c's not Ready yet) and meshed pods, some broken.
import { randomBytes } from "node:crypto";
import type { CoreV1Api, V1Pod } from "@kubernetes/client-node";
import { agentName, createCniAgent, setCniAgentReady } from "../harness/cni-agents.js";
import {
  type Mesh,
  meshedPod,
  VALIDATOR,
  type ValidatorOutcome,
  validatorStatus,
  writePodStatus,
} from "../harness/pod-fixtures.js";

export const DEMO_NAMESPACE = "demo";
export const NODES = ["node-a", "node-b", "node-c"] as const;
/** Its CNI agents start not Ready: broken pods there are held until the demo marks them Ready. */
export const LATE_NODE = "node-c";

/** Where each mesh's CNI DaemonSet runs. */
const AGENT_NAMESPACE: Record<Exclude<Mesh, "none">, string> = { istio: "istio-system", linkerd: "linkerd-cni" };

type DemoPod = {
  readonly name: string;
  readonly mesh: Exclude<Mesh, "none">;
  readonly node: string;
  readonly validator: ValidatorOutcome;
  readonly phase?: "Running" | "Failed";
  readonly owner?: { kind: string; name: string };
  readonly restartPolicy?: "Always" | "Never";
};

const crashloop = (mesh: Exclude<Mesh, "none">): ValidatorOutcome => ({
  kind: "crashloop",
  exitCode: VALIDATOR[mesh].exitCode,
});
const rs = (app: string) => ({ kind: "ReplicaSet", name: `${app}-7d9f6b` });

/** Healthy pods outnumber broken ones, so the storm breaker (more than half broken) stays closed. */
export const DEMO_PODS: readonly DemoPod[] = [
  ...NODES.flatMap((node): DemoPod[] => [
    { name: `web-${node}`, mesh: "istio", node, validator: { kind: "succeeded" }, owner: rs("web") },
    { name: `cart-${node}`, mesh: "istio", node, validator: { kind: "succeeded" }, owner: rs("cart") },
    { name: `emoji-${node}`, mesh: "linkerd", node, validator: { kind: "succeeded" }, owner: rs("emoji") },
    { name: `voting-${node}`, mesh: "linkerd", node, validator: { kind: "succeeded" }, owner: rs("voting") },
  ]),
  // Broken by the CNI race, on nodes whose agent is Ready: deleted at once, their owner makes new ones.
  {
    name: "checkout-7d9f6b-x2k4p",
    mesh: "istio",
    node: "node-a",
    validator: crashloop("istio"),
    owner: rs("checkout"),
  },
  { name: "books-7d9f6b-q9w2e", mesh: "linkerd", node: "node-b", validator: crashloop("linkerd"), owner: rs("books") },
  // restartPolicy Never: the validator's failed run is the current state. Still Running: deleted (Istio's and
  // Linkerd's own repair controllers miss these)...
  {
    name: "migrate-job-h4s8d",
    mesh: "linkerd",
    node: "node-a",
    validator: { kind: "failed", exitCode: VALIDATOR.linkerd.exitCode },
    phase: "Running",
    owner: { kind: "Job", name: "migrate-job" },
    restartPolicy: "Never",
  },
  // ...but once Failed the pod is finished: deleting it repairs nothing, so it is held (and reported).
  {
    name: "report-job-r7t2m",
    mesh: "istio",
    node: "node-b",
    validator: { kind: "failed", exitCode: VALIDATOR.istio.exitCode },
    phase: "Failed",
    owner: { kind: "Job", name: "report-job" },
    restartPolicy: "Never",
  },
  // No owner would recreate it: labelled for a human instead of deleted.
  { name: "debug-shell", mesh: "istio", node: "node-a", validator: crashloop("istio") },
  // On node-c, whose CNI agents are not Ready yet: held until they are.
  { name: "api-7d9f6b-m3n8b", mesh: "istio", node: LATE_NODE, validator: crashloop("istio"), owner: rs("api") },
  {
    name: "worker-7d9f6b-k5j6h",
    mesh: "linkerd",
    node: LATE_NODE,
    validator: crashloop("linkerd"),
    owner: rs("worker"),
  },
];

/** Creates the namespaces, Istio's repair settings (off), one CNI agent per mesh and node, and the demo pods. */
export async function seedDemo(api: CoreV1Api): Promise<void> {
  for (const namespace of [DEMO_NAMESPACE, AGENT_NAMESPACE.istio, AGENT_NAMESPACE.linkerd]) {
    await api.createNamespace({ body: { metadata: { name: namespace } } });
  }
  // Istio's agents come with Istio's repair switched off (its chart's repair.enabled=false), so cni-repair repairs
  // istio's pods; beside an agent without these settings it would hold them, as Istio's defaults repair in place.
  const anHourAgo = new Date(Date.now() - 60 * 60_000);
  for (const mesh of ["istio", "linkerd"] as const) {
    for (const nodeName of NODES) {
      await createCniAgent(api, {
        namespace: AGENT_NAMESPACE[mesh],
        mesh,
        nodeName,
        ...(nodeName !== LATE_NODE && { readySince: anHourAgo }),
      });
    }
  }
  for (const pod of DEMO_PODS) await createDemoPod(api, pod);
}

/** Marks node-c's agents Ready now, as a DaemonSet rollout finishing would. */
export async function makeLateAgentsReady(api: CoreV1Api): Promise<void> {
  for (const mesh of ["istio", "linkerd"] as const) {
    await setCniAgentReady(api, { namespace: AGENT_NAMESPACE[mesh], name: agentName(mesh, LATE_NODE) }, new Date());
  }
}

async function createDemoPod(api: CoreV1Api, pod: DemoPod): Promise<void> {
  await api.createNamespacedPod({
    namespace: DEMO_NAMESPACE,
    body: meshedPod({
      name: pod.name,
      namespace: DEMO_NAMESPACE,
      nodeName: pod.node,
      mesh: pod.mesh,
      restartPolicy: pod.restartPolicy ?? "Always",
      ...(pod.owner && { owner: pod.owner }),
    }),
  });
  await writePodStatus(
    api,
    { namespace: DEMO_NAMESPACE, name: pod.name },
    {
      phase: pod.phase ?? (pod.validator.kind === "succeeded" ? "Running" : "Pending"),
      initContainerStatuses: [validatorStatus(VALIDATOR[pod.mesh].container, pod.validator)],
    },
  );
}

/**
 * What a kubelet and a ReplicaSet controller would do with a pod we deleted (neither runs here): remove it for
 * good and, for a ReplicaSet's pod, create its healthy replacement. Returns the replacement's name.
 */
export async function finishDeletion(api: CoreV1Api, pod: V1Pod): Promise<string | undefined> {
  const name = pod.metadata?.name ?? "";
  await api.deleteNamespacedPod({ namespace: DEMO_NAMESPACE, name, gracePeriodSeconds: 0 });
  const owner = pod.metadata?.ownerReferences?.find((ref) => ref.controller);
  if (owner?.kind !== "ReplicaSet") return undefined;
  const mesh: Exclude<Mesh, "none"> = pod.metadata?.annotations?.["sidecar.istio.io/status"] ? "istio" : "linkerd";
  const replacement = `${owner.name}-${randomBytes(3).toString("hex").slice(0, 5)}`;
  await createDemoPod(api, {
    name: replacement,
    mesh,
    node: pod.spec?.nodeName ?? "node-a",
    validator: { kind: "succeeded" },
    owner: { kind: owner.kind, name: owner.name },
  });
  return replacement;
}
