// The one transform from a raw Pod (watch JSON or a client-node V1Pod) to the compact PodFacts the cache keeps.

import type { ContainerState, InitContainerFacts, OwnerRef, PodFacts, Termination } from "./facts.js";
import { isAmbient, type Marker, type Rule } from "./rule.js";

/** What toPodFacts keeps from a pod: everything else is dropped at the edge. */
export type FactsSchema = {
  readonly labelKeys: readonly string[];
  readonly annotationKeys: readonly string[];
  /**
   * Keys (label or annotation) whose value some rule compares. The others only need to be present, so their
   * value is stored as "" — an Istio sidecar-status annotation is hundreds of bytes we would keep 100k times.
   */
  readonly valueKeys: ReadonlySet<string>;
  readonly initContainers: readonly string[];
  /** Termination messages are kept only when some rule matches on them. */
  readonly keepMessages: boolean;
  /** The sandbox time is read only when a rule needs it (ambient enrolment grace). */
  readonly keepSandboxSince: boolean;
};

const unique = (values: Iterable<string>): readonly string[] => Object.freeze([...new Set(values)]);

/** The schema the given rules need; `extra.labelKeys` are labels other parts (actions, policy) read by value. */
export function factsSchema(
  rules: readonly Rule[],
  extra: { readonly labelKeys?: readonly string[] } = {},
): FactsSchema {
  const labelKeys: string[] = [...(extra.labelKeys ?? [])];
  const annotationKeys: string[] = [];
  const valueKeys = new Set<string>(extra.labelKeys ?? []);
  const initContainerNames: string[] = [];
  const marker = (list: string[], m: Marker | undefined) => {
    if (m === undefined) return;
    list.push(m.key);
    if (m.value !== undefined) valueKeys.add(m.key);
  };
  for (const rule of rules) {
    if (isAmbient(rule)) {
      for (const m of [rule.podSelector, rule.optOut]) marker(labelKeys, m);
      marker(annotationKeys, { key: rule.redirectionAnnotation, value: "enabled" });
      marker(annotationKeys, { key: rule.sidecarAnnotation });
      continue;
    }
    marker(labelKeys, rule.requiredLabel);
    marker(annotationKeys, rule.requiredAnnotation);
    initContainerNames.push(rule.initContainer);
  }
  return Object.freeze({
    labelKeys: unique(labelKeys),
    annotationKeys: unique(annotationKeys),
    valueKeys,
    initContainers: unique(initContainerNames),
    // An empty substring matches anything, so detect treats it as unset and needs no message.
    keepMessages: rules.some((r) => !isAmbient(r) && r.messageContains !== undefined && r.messageContains !== ""),
    keepSandboxSince: rules.some(isAmbient),
  });
}

type Obj = Readonly<Record<string, unknown>>;

const EMPTY_RECORD: Readonly<Record<string, string>> = Object.freeze({});
const EMPTY_INITS: readonly InitContainerFacts[] = Object.freeze([]);

const asObject = (v: unknown): Obj | undefined =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Obj) : undefined;

// Own properties only: an inherited `constructor` or `toString` is never a pod field.
const field = (o: Obj | undefined, key: string): unknown =>
  o !== undefined && Object.hasOwn(o, key) ? o[key] : undefined;

const nonEmpty = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/**
 * Only the wanted keys with string values; the schema's key strings are reused so 100k pods share them, and a
 * key whose value no rule compares keeps "" (presence is all that matters).
 */
function pick(
  source: unknown,
  keys: readonly string[],
  valueKeys: ReadonlySet<string>,
): Readonly<Record<string, string>> {
  const src = asObject(source);
  if (src === undefined || keys.length === 0) return EMPTY_RECORD;
  const entries: [string, string][] = [];
  for (const key of keys) {
    const value = field(src, key);
    if (typeof value === "string") entries.push([key, valueKeys.has(key) ? value : ""]);
  }
  // fromEntries defines own properties, so even a "__proto__" key stays data.
  return entries.length === 0 ? EMPTY_RECORD : Object.fromEntries(entries);
}

/** The kubelet's condition for "sandbox created and its network configured" (Kubernetes 1.29+, on by default). */
export const SANDBOX_CONDITION = "PodReadyToStartContainers";

/**
 * When the current sandbox was set up: the condition's True transition; without that condition (older kubelets)
 * the earliest start any container shows (a container runs only inside a sandbox, so never earlier than it).
 * Undefined while there is no sandbox, or no time to go by.
 */
function sandboxSince(status: Obj | undefined): number | undefined {
  const conditions = field(status, "conditions");
  let condition: Obj | undefined;
  if (Array.isArray(conditions)) {
    for (const raw of conditions) if (field(asObject(raw), "type") === SANDBOX_CONDITION) condition = asObject(raw);
  }
  if (condition !== undefined && field(condition, "status") !== "True") return undefined;
  const at = condition === undefined ? undefined : timestampMs(field(condition, "lastTransitionTime"));
  return at ?? earliestContainerStart(status);
}

/** The earliest startedAt of any container's current or previous run, init containers included. */
function earliestContainerStart(status: Obj | undefined): number | undefined {
  let earliest: number | undefined;
  for (const list of [field(status, "initContainerStatuses"), field(status, "containerStatuses")]) {
    if (!Array.isArray(list)) continue;
    for (const raw of list) {
      const container = asObject(raw);
      const current = asObject(field(container, "state"));
      const runs = [
        field(current, "running"),
        field(current, "terminated"),
        field(asObject(field(container, "lastState")), "terminated"),
      ];
      for (const run of runs) {
        const started = timestampMs(field(asObject(run), "startedAt"));
        if (started !== undefined && (earliest === undefined || started < earliest)) earliest = started;
      }
    }
  }
  return earliest;
}

/** The kubelet marks the API copy of a static pod with this annotation (and makes its Node the controller). */
export const MIRROR_ANNOTATION = "kubernetes.io/config.mirror";

function isMirrorPod(metadata: Obj | undefined): boolean {
  const annotations = asObject(field(metadata, "annotations"));
  if (field(annotations, MIRROR_ANNOTATION) !== undefined) return true;
  return controllerOwner(field(metadata, "ownerReferences"))?.kind === "Node";
}

function controllerOwner(refs: unknown): OwnerRef | undefined {
  if (!Array.isArray(refs)) return undefined;
  for (let i = 0; i < refs.length; i++) {
    const ref = asObject(refs[i]);
    if (field(ref, "controller") !== true) continue;
    // The API server allows at most one controller; a malformed one counts as none (the safe side).
    const kind = nonEmpty(field(ref, "kind"));
    const name = nonEmpty(field(ref, "name"));
    const uid = nonEmpty(field(ref, "uid"));
    return kind !== undefined && name !== undefined && uid !== undefined ? { kind, name, uid } : undefined;
  }
  return undefined;
}

function termination(raw: unknown, keepMessages: boolean): Termination | undefined {
  const t = asObject(raw);
  const exitCode = field(t, "exitCode");
  if (typeof exitCode !== "number" || !Number.isInteger(exitCode)) return undefined;
  const reason = field(t, "reason");
  const message = keepMessages ? field(t, "message") : undefined;
  return {
    exitCode,
    reason: typeof reason === "string" ? reason : undefined,
    message: typeof message === "string" ? message : undefined,
    startedAtMs: timestampMs(field(t, "startedAt")),
    finishedAtMs: timestampMs(field(t, "finishedAt")),
  };
}

function containerState(raw: unknown, keepMessages: boolean): ContainerState {
  const s = asObject(raw);
  const terminated = field(s, "terminated");
  // A terminated state without an integer exit code tells us nothing: "unknown", never a match.
  if (terminated != null) return termination(terminated, keepMessages) ?? "unknown";
  if (asObject(field(s, "running")) !== undefined) return "running";
  if (asObject(field(s, "waiting")) !== undefined) return "waiting";
  return "unknown";
}

function initContainers(statuses: unknown, schema: FactsSchema): readonly InitContainerFacts[] {
  const wanted = schema.initContainers;
  if (!Array.isArray(statuses) || wanted.length === 0) return EMPTY_INITS;
  const out: InitContainerFacts[] = [];
  for (let i = 0; i < statuses.length && out.length < wanted.length; i++) {
    const status = asObject(statuses[i]);
    const raw = field(status, "name");
    const name = typeof raw === "string" ? wanted[wanted.indexOf(raw)] : undefined;
    // Names are unique in a real pod; on a malformed one the first status wins.
    if (name === undefined || out.some((c) => c.name === name)) continue;
    out.push({
      name,
      state: containerState(field(status, "state"), schema.keepMessages),
      lastTermination: termination(field(asObject(field(status, "lastState")), "terminated"), schema.keepMessages),
      restartCount: restartCount(field(status, "restartCount")),
    });
  }
  return out.length === 0 ? EMPTY_INITS : out;
}

/** A usable restart count, 0 otherwise (the first run). */
const restartCount = (value: unknown): number =>
  typeof value === "number" && Number.isInteger(value) && value > 0 ? value : 0;

/** A timestamp as client-node (Date) or watch JSON (RFC 3339 string) carries it, in epoch ms. */
function timestampMs(value: unknown): number | undefined {
  const ms = value instanceof Date ? value.getTime() : typeof value === "string" ? Date.parse(value) : Number.NaN;
  return Number.isFinite(ms) ? ms : undefined;
}

function extract(pod: unknown, schema: FactsSchema): PodFacts | undefined {
  const p = asObject(pod);
  const metadata = asObject(field(p, "metadata"));
  const namespace = nonEmpty(field(metadata, "namespace"));
  const name = nonEmpty(field(metadata, "name"));
  const uid = nonEmpty(field(metadata, "uid"));
  const resourceVersion = nonEmpty(field(metadata, "resourceVersion"));
  if (namespace === undefined || name === undefined || uid === undefined || resourceVersion === undefined) {
    return undefined;
  }
  const spec = asObject(field(p, "spec"));
  const status = asObject(field(p, "status"));
  // client-node models carry a Date, watch JSON a string: any non-null value means deletion has begun.
  const deletionTimestamp = field(metadata, "deletionTimestamp");
  // One literal with a fixed field order, so every cached pod shares one hidden class.
  return {
    namespace,
    name,
    uid,
    resourceVersion,
    nodeName: nonEmpty(field(spec, "nodeName")),
    phase: nonEmpty(field(status, "phase")),
    restartPolicy: nonEmpty(field(spec, "restartPolicy")),
    hostNetwork: field(spec, "hostNetwork") === true,
    staticPod: isMirrorPod(metadata),
    sandboxSinceMs: schema.keepSandboxSince ? sandboxSince(status) : undefined,
    deleting: deletionTimestamp !== undefined && deletionTimestamp !== null,
    createdAtMs: timestampMs(field(metadata, "creationTimestamp")),
    owner: controllerOwner(field(metadata, "ownerReferences")),
    labels: pick(field(metadata, "labels"), schema.labelKeys, schema.valueKeys),
    annotations: pick(field(metadata, "annotations"), schema.annotationKeys, schema.valueKeys),
    initContainers: initContainers(field(status, "initContainerStatuses"), schema),
  };
}

/**
 * The facts of a raw Pod, or undefined when it lacks namespace, name, uid or resourceVersion.
 * Never throws: wrong-typed optional fields read as absent.
 */
export function toPodFacts(pod: unknown, schema: FactsSchema): PodFacts | undefined {
  try {
    return extract(pod, schema);
  } catch {
    // Only exotic objects get here (a Proxy or a throwing getter); JSON and client-node models never do.
    return undefined;
  }
}

const sameRecord = (a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean => {
  if (a === b) return true;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
};

const sameTermination = (a: Termination | undefined, b: Termination | undefined): boolean =>
  a === b ||
  (a !== undefined &&
    b !== undefined &&
    a.exitCode === b.exitCode &&
    a.reason === b.reason &&
    a.message === b.message &&
    // A new failure with the same code is news: Istio's fallback reads when the validator's last run began and ended.
    a.startedAtMs === b.startedAtMs &&
    a.finishedAtMs === b.finishedAtMs);

const sameState = (a: ContainerState, b: ContainerState): boolean =>
  typeof a === "string" || typeof b === "string" ? a === b : sameTermination(a, b);

const sameInits = (a: readonly InitContainerFacts[], b: readonly InitContainerFacts[]): boolean =>
  a === b ||
  (a.length === b.length &&
    a.every((x, i) => {
      const y = b[i];
      return (
        y !== undefined &&
        x.name === y.name &&
        x.restartCount === y.restartCount &&
        sameState(x.state, y.state) &&
        sameTermination(x.lastTermination, y.lastTermination)
      );
    }));

const sameOwner = (a: OwnerRef | undefined, b: OwnerRef | undefined): boolean =>
  a === b || (a !== undefined && b !== undefined && a.kind === b.kind && a.name === b.name && a.uid === b.uid);

/**
 * True when two facts agree on everything except resourceVersion.
 * resourceVersion changes on every write to the pod (status heartbeats, conditions, unrelated labels,
 * managedFields), none of which changes a verdict; comparing it would make every update look relevant.
 * Callers still store the newer facts, so actions use the latest resourceVersion as a precondition.
 */
export function sameFacts(a: PodFacts, b: PodFacts): boolean {
  return (
    a.uid === b.uid &&
    a.namespace === b.namespace &&
    a.name === b.name &&
    a.nodeName === b.nodeName &&
    a.phase === b.phase &&
    a.restartPolicy === b.restartPolicy &&
    a.hostNetwork === b.hostNetwork &&
    a.staticPod === b.staticPod &&
    a.sandboxSinceMs === b.sandboxSinceMs &&
    a.deleting === b.deleting &&
    a.createdAtMs === b.createdAtMs &&
    sameOwner(a.owner, b.owner) &&
    sameRecord(a.labels, b.labels) &&
    sameRecord(a.annotations, b.annotations) &&
    sameInits(a.initContainers, b.initContainers)
  );
}
