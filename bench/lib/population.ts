// The healthy pod population: deterministic names over namespaces and nodes, grown to a size with a progress line.
import { type BenchClient, inParallel, podPath, podsPath } from "./kube-client.js";
import { healthyStatus, meshedPodBody } from "./pod-template.js";

const PODS_PER_NAMESPACE = 1000;
const PODS_PER_NODE = 100;
const PODS_PER_APP = 10;
const MERGE_PATCH = "application/merge-patch+json";

export type PodRef = {
  readonly namespace: string;
  readonly name: string;
  readonly app: string;
  readonly index: number;
};

/** The i-th population pod: ~1,000 per namespace, 10 per app (Deployment), 100 per node. */
export function populationPod(i: number): PodRef {
  const app = `svc-${Math.floor(i / PODS_PER_APP).toString(36)}`;
  return {
    namespace: `bench-pop-${Math.floor(i / PODS_PER_NAMESPACE)}`,
    name: `${app}-7d9f8b6c5-${i.toString(36).padStart(5, "0")}`,
    app,
    index: i,
  };
}

export const nodeName = (n: number): string => `node-${n}`;
export const nodeOf = (i: number): string => nodeName(Math.floor(i / PODS_PER_NODE));

/** How many nodes a population of `pods` spans. */
export const nodeCount = (pods: number): number => Math.max(1, Math.ceil(pods / PODS_PER_NODE));

/** Creates the pod, then writes a Running status as a kubelet would (the API server drops status on create). */
export async function createRunningPod(client: BenchClient, pod: PodRef, node: string): Promise<void> {
  await client.request("POST", podsPath(pod.namespace), meshedPodBody(pod.namespace, pod.name, pod.app, node));
  await client.request(
    "PATCH",
    `${podPath(pod.namespace, pod.name)}/status`,
    { status: healthyStatus(pod.app, pod.index) },
    MERGE_PATCH,
  );
}

export async function ensureNamespace(client: BenchClient, name: string): Promise<void> {
  try {
    await client.request("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name } });
  } catch (error) {
    if (!(error instanceof Error) || !error.message.includes(" 409 ")) throw error;
  }
}

/** Grows the population from `from` to `to` pods, printing a progress line every couple of seconds. */
export async function growPopulation(
  client: BenchClient,
  from: number,
  to: number,
  concurrency: number,
  progress: (line: string) => void,
): Promise<number> {
  const started = performance.now();
  for (let ns = Math.floor(from / PODS_PER_NAMESPACE); ns * PODS_PER_NAMESPACE < to; ns++) {
    await ensureNamespace(client, `bench-pop-${ns}`);
  }
  let done = 0;
  const report = () => {
    const seconds = (performance.now() - started) / 1000;
    progress(`creating pods: ${from + done}/${to} (${Math.round(done / Math.max(seconds, 0.001))} pods/s)`);
  };
  const timer = setInterval(report, 2_000);
  try {
    await inParallel(to - from, concurrency, async (k) => {
      const i = from + k;
      await createRunningPod(client, populationPod(i), nodeOf(i));
      done++;
    });
  } finally {
    clearInterval(timer);
  }
  report();
  return (performance.now() - started) / 1000;
}
