// Victim pods: created healthy (so they are cached), then turned broken by a status write, as the kubelet would.
import { type BenchClient, inParallel, podPath, podsPath } from "./kube-client.js";
import { brokenStatus, healthyStatus, meshedPodBody } from "./pod-template.js";
import { ensureNamespace, nodeName } from "./population.js";

/** The audit policy records pod writes in exactly these namespaces. */
export const VICTIM_NAMESPACES: readonly string[] = Array.from({ length: 10 }, (_, i) => `bench-victims-${i}`);
export const VICTIM_LABEL = { key: "bench-role", value: "victim" } as const;
export const BREAK_USER_AGENT = "bench-break/1";
const MERGE_PATCH = "application/merge-patch+json";

export type Victim = { readonly namespace: string; readonly name: string; readonly index: number };

export const victimKey = (victim: { namespace: string; name: string }): string => `${victim.namespace}/${victim.name}`;

export async function ensureVictimNamespaces(client: BenchClient): Promise<void> {
  for (const namespace of VICTIM_NAMESPACES) await ensureNamespace(client, namespace);
}

/**
 * `count` healthy victims named `<batch>-<k>`, spread over the victim namespaces and the population's
 * `nodes` nodes (so no node is mostly broken, which would rightly trip the storm breaker), or all on the node
 * named by `nodes` (the node-scoped runs). Each has its own owner, as pods of different Deployments: a repeat on
 * one owner and node would trip the loop backoff.
 */
export async function createVictims(
  client: BenchClient,
  batch: string,
  count: number,
  nodes: number | string,
  concurrency: number,
): Promise<Victim[]> {
  const victims = Array.from({ length: count }, (_, k) => ({
    namespace: VICTIM_NAMESPACES[k % VICTIM_NAMESPACES.length] ?? "bench-victims-0",
    name: `${batch}-${k}`,
    index: k,
  }));
  await inParallel(count, concurrency, async (k) => {
    const victim = victims[k] as Victim;
    const labels = { [VICTIM_LABEL.key]: VICTIM_LABEL.value };
    const node = typeof nodes === "string" ? nodes : nodeName(k % Math.max(1, nodes));
    // The pod's name doubles as its app (and so its owner), unique per victim.
    await client.request(
      "POST",
      podsPath(victim.namespace),
      meshedPodBody(victim.namespace, victim.name, victim.name, node, labels),
    );
    await client.request(
      "PATCH",
      `${podPath(victim.namespace, victim.name)}/status`,
      { status: healthyStatus(victim.name, 60_000 + k) },
      MERGE_PATCH,
    );
  });
  return victims;
}

/** Writes Init:CrashLoopBackOff with exit 126 (use a client whose user agent is BREAK_USER_AGENT). */
export async function breakVictim(breaker: BenchClient, victim: Victim): Promise<void> {
  await breaker.request(
    "PATCH",
    `${podPath(victim.namespace, victim.name)}/status`,
    { status: brokenStatus(victim.name) },
    MERGE_PATCH,
  );
}

/** Removes victims at once (grace 0), e.g. those a controller did not repair, so no run inherits them. */
export async function removeVictims(
  client: BenchClient,
  victims: readonly Victim[],
  concurrency: number,
): Promise<void> {
  await inParallel(victims.length, concurrency, async (k) => {
    const victim = victims[k] as Victim;
    await client.tolerant("DELETE", podPath(victim.namespace, victim.name), {
      apiVersion: "v1",
      kind: "DeleteOptions",
      gracePeriodSeconds: 0,
    });
  });
}

/** Removes the victims a controller did not delete (`deleted`: the fake kubelet's record), so no run inherits them. */
export async function removeUndeleted(
  client: BenchClient,
  victims: readonly Victim[],
  deleted: ReadonlyMap<string, number>,
  concurrency: number,
): Promise<void> {
  await removeVictims(
    client,
    victims.filter((victim) => !deleted.has(victimKey(victim))),
    concurrency,
  );
}
