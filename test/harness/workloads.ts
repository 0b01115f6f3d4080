// Meshed workloads for the e2e cluster: a Deployment, a StatefulSet and a Job whose pods carry Istio's marker
// and validator init container, spread evenly over the nodes; and how to tell they are all healthy.
import type { AppsV1Api, BatchV1Api, CoreV1Api, V1Pod, V1PodTemplateSpec } from "@kubernetes/client-node";
import { meshedPod } from "./pod-fixtures.js";

/** The pod template the mesh's injector would leave: marker annotation, validator init container. */
export function meshedTemplate(
  app: string,
  options: { restartPolicy?: "Always" | "Never"; nodeName?: string } = {},
): V1PodTemplateSpec {
  const pod = meshedPod({
    name: app,
    namespace: "unused",
    mesh: "istio",
    ...(options.restartPolicy && { restartPolicy: options.restartPolicy }),
  });
  return {
    metadata: { labels: { app }, ...(pod.metadata?.annotations && { annotations: pod.metadata.annotations }) },
    spec: {
      ...pod.spec,
      containers: pod.spec?.containers ?? [],
      ...(options.nodeName && { nodeSelector: { "kubernetes.io/hostname": options.nodeName } }),
      // As even as the scheduler can make it: a replacement goes where its predecessor was missing.
      topologySpreadConstraints: [
        {
          maxSkew: 1,
          topologyKey: "kubernetes.io/hostname",
          whenUnsatisfiable: "DoNotSchedule",
          labelSelector: { matchLabels: { app } },
        },
      ],
      terminationGracePeriodSeconds: 1,
    },
  };
}

/** `nodeName`: only that node will do (a workload waiting for a new node pool's capacity). */
export async function createDeployment(
  apps: AppsV1Api,
  namespace: string,
  name: string,
  replicas: number,
  nodeName?: string,
) {
  await apps.createNamespacedDeployment({
    namespace,
    body: {
      metadata: { name },
      spec: {
        replicas,
        selector: { matchLabels: { app: name } },
        template: meshedTemplate(name, nodeName === undefined ? {} : { nodeName }),
      },
    },
  });
}

/** Pods created in parallel (not one by one), so a broken one does not stop the others from starting. */
export async function createStatefulSet(apps: AppsV1Api, namespace: string, name: string, replicas: number) {
  await apps.createNamespacedStatefulSet({
    namespace,
    body: {
      metadata: { name },
      spec: {
        replicas,
        serviceName: name,
        podManagementPolicy: "Parallel",
        selector: { matchLabels: { app: name } },
        template: meshedTemplate(name),
      },
    },
  });
}

/** A one-pod Job whose pod never restarts in place, pinned to a node. */
export async function createJob(batch: BatchV1Api, namespace: string, name: string, nodeName: string) {
  await batch.createNamespacedJob({
    namespace,
    body: {
      metadata: { name },
      spec: {
        completions: 1,
        parallelism: 1,
        backoffLimit: 6,
        template: meshedTemplate(name, { restartPolicy: "Never", nodeName }),
      },
    },
  });
}

/** Running, Ready, not terminating. */
export function isHealthy(pod: V1Pod): boolean {
  return (
    pod.metadata?.deletionTimestamp === undefined &&
    pod.status?.phase === "Running" &&
    (pod.status.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True")
  );
}

/** The app's pods, and how many of them are healthy. */
export async function appPods(
  core: CoreV1Api,
  namespace: string,
  app: string,
): Promise<{ pods: V1Pod[]; healthy: number }> {
  const list = await core.listNamespacedPod({ namespace, labelSelector: `app=${app}` });
  return { pods: list.items, healthy: list.items.filter(isHealthy).length };
}
