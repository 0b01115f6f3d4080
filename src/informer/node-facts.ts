// The little kept of a Node for startup-taint management: its name, uid, version, age, and its taints exactly as the
// API server holds them (a taint write tests the version it was judged on; the other taints are sent back untouched).

export type Taint = {
  readonly key: string;
  readonly effect: string;
  readonly value?: string;
  readonly timeAdded?: string;
};

export type NodeFacts = {
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  /** metadata.creationTimestamp in ms; NaN when missing. */
  readonly createdAtMs: number;
  /** spec.taints as listed (undefined when the node has none: the field is then absent). */
  readonly taints: readonly Taint[] | undefined;
};

export const nodeKey = (facts: NodeFacts): string => facts.name;

/** Equal when nothing the taint decision reads differs (a heartbeat changes only the resourceVersion). */
export const sameNode = (a: NodeFacts, b: NodeFacts): boolean =>
  a.uid === b.uid && JSON.stringify(a.taints) === JSON.stringify(b.taints);

/** Raw Node JSON to NodeFacts; never throws; undefined for anything that is not a named Node. */
export function toNodeFacts(raw: unknown): NodeFacts | undefined {
  const node = raw as {
    metadata?: { name?: unknown; uid?: unknown; resourceVersion?: unknown; creationTimestamp?: unknown };
    spec?: { taints?: unknown };
  } | null;
  const name = node?.metadata?.name;
  if (typeof name !== "string" || name === "") return undefined;
  const uid = typeof node?.metadata?.uid === "string" ? node.metadata.uid : "";
  const resourceVersion = typeof node?.metadata?.resourceVersion === "string" ? node.metadata.resourceVersion : "";
  const created = node?.metadata?.creationTimestamp;
  const createdAtMs = typeof created === "string" ? Date.parse(created) : Number.NaN;
  const rawTaints = node?.spec?.taints;
  const taints = Array.isArray(rawTaints) ? rawTaints.flatMap(toTaint) : undefined;
  return { name, uid, resourceVersion, createdAtMs, taints };
}

function toTaint(raw: unknown): Taint[] {
  const t = raw as { key?: unknown; effect?: unknown; value?: unknown; timeAdded?: unknown } | null;
  if (typeof t?.key !== "string" || typeof t.effect !== "string") return [];
  return [
    {
      key: t.key,
      effect: t.effect,
      ...(typeof t.value === "string" && { value: t.value }),
      ...(typeof t.timeAdded === "string" && { timeAdded: t.timeAdded }),
    },
  ];
}

/** The configured keys the node carries, in the order configured. */
export const startupKeysOn = (taints: readonly Taint[] | undefined, keys: readonly string[]): string[] =>
  keys.filter((key) => taints?.some((taint) => taint.key === key));
