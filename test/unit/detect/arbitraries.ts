// fast-check arbitraries for detection: PodFacts from small domains, and raw pod-shaped JSON with wrong-typed fields.

import fc from "fast-check";
import type { ContainerState, InitContainerFacts, OwnerRef, PodFacts, Termination } from "../../../src/detect/facts.js";
import { presetRule } from "../../../src/detect/presets.js";
import type { ValidatorRule as Rule } from "../../../src/detect/rule.js";

export const istio = presetRule("istio") as Rule;
export const linkerd = presetRule("linkerd") as Rule;
export const acme: Rule = {
  name: "acme",
  initContainer: "acme-net-check",
  exitCodes: [3, 7, 42],
  messageContains: "redirect missing",
  requiredLabel: { key: "mesh.acme.io/enabled", value: "true" },
};
export const allRules: readonly Rule[] = [istio, linkerd, acme];

/** Every key and name some rule reads; noise must avoid them. */
export const ruleKeys = new Set([
  "app", // not a rule's, but the property tests' facts schema reads it (factsSchema(allRules, { labelKeys: ["app"] }))
  "sidecar.istio.io/status",
  "linkerd.io/control-plane-ns",
  "mesh.acme.io/enabled",
  "istio-validation",
  "linkerd-network-validator",
  "acme-net-check",
]);

/** Anything at all, including the exotic values JSON never has. */
export const anyValue = fc.anything({
  withBigInt: true,
  withBoxedValues: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withNullPrototype: true,
  withObjectString: true,
  withSparseArray: true,
  withTypedArray: true,
});

// Small domains so rules match often and equal facts come up.
// Biased towards the rules' codes so broken verdicts are common, not a rare corner.
const exitCode = fc.oneof(fc.constant(126), fc.constant(95), fc.constantFrom(3, 7, 42), fc.constantFrom(0, 1, 137));
const containerName = fc.constantFrom("istio-validation", "linkerd-network-validator", "acme-net-check", "other");
const message = fc.constantFrom(undefined, "iptables redirect missing", "dns failed");
const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });

// Facts are plain objects (toPodFacts makes them so), never null-prototype ones.
const plain = { noNullPrototype: true } as const;

const termination: fc.Arbitrary<Termination> = fc.record(
  {
    exitCode,
    reason: fc.constantFrom(undefined, "Error", "Completed"),
    message,
    startedAtMs: opt(fc.integer({ min: 0, max: 2_000_000_000_000 })),
    finishedAtMs: opt(fc.integer({ min: 0, max: 2_000_000_000_000 })),
  },
  plain,
);
const state: fc.Arbitrary<ContainerState> = fc.oneof(termination, fc.constantFrom("running", "waiting", "unknown"));
const initFacts: fc.Arbitrary<InitContainerFacts> = fc.record(
  { name: containerName, state, lastTermination: opt(termination), restartCount: fc.nat(10) },
  plain,
);
const owner: fc.Arbitrary<OwnerRef> = fc.record(
  {
    kind: fc.constantFrom("ReplicaSet", "Job"),
    name: fc.constantFrom("a", "b"),
    uid: fc.constantFrom("u1", "u2"),
  },
  plain,
);
const markerLabels = fc.dictionary(
  fc.constantFrom("linkerd.io/control-plane-ns", "mesh.acme.io/enabled", "app"),
  fc.constantFrom("", "true", "linkerd"),
  plain,
);
const markerAnnotations = fc.dictionary(
  fc.constantFrom("sidecar.istio.io/status", "other"),
  fc.constantFrom("", "{}"),
  plain,
);

export const podFacts: fc.Arbitrary<PodFacts> = fc.record(
  {
    namespace: fc.constantFrom("ns1", "ns2"),
    name: fc.constantFrom("p1", "p2"),
    uid: fc.constantFrom("u1", "u2"),
    resourceVersion: fc.constantFrom("1", "2"),
    nodeName: opt(fc.constantFrom("node-a", "node-b")),
    phase: opt(fc.constantFrom("Pending", "Running", "Failed", "Succeeded")),
    restartPolicy: opt(fc.constantFrom("Always", "Never")),
    deleting: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    hostNetwork: fc.boolean(),
    staticPod: fc.constant(false),
    sandboxSinceMs: fc.constant(undefined),
    createdAtMs: opt(fc.constantFrom(1_000, 2_000)),
    owner: opt(owner),
    labels: markerLabels,
    annotations: markerAnnotations,
    initContainers: fc.uniqueArray(initFacts, { maxLength: 4, selector: (c) => c.name }),
  },
  plain,
);

/** Usually the valid shape, sometimes anything at all. */
const maybeWrong = <T>(valid: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 5, arbitrary: valid }, { weight: 1, arbitrary: anyValue });

/** Identity fields: wrong now and then, so most pods get through to the rest of toPodFacts. */
const rarelyWrong = <T>(valid: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
  fc.oneof(
    { weight: 30, arbitrary: valid },
    { weight: 1, arbitrary: anyValue },
    { weight: 1, arbitrary: fc.constant("") },
  );

const text = fc.constantFrom("a", "b", "");
const id = fc.constantFrom("a", "b");
const rawTermination = fc.record(
  {
    exitCode: maybeWrong(exitCode),
    reason: maybeWrong(fc.constantFrom("Error", "Completed")),
    message: maybeWrong(message),
  },
  { requiredKeys: ["exitCode"] },
);
const rawState = fc.oneof(
  fc.record({ terminated: maybeWrong(rawTermination) }),
  fc.constant({ running: { startedAt: "2025-03-04T10:15:00Z" } }),
  fc.constant({ waiting: { reason: "CrashLoopBackOff" } }),
  fc.constant({}),
);
const rawInitStatus = fc.record(
  {
    name: maybeWrong(containerName),
    state: maybeWrong(rawState),
    lastState: maybeWrong(fc.oneof(fc.record({ terminated: maybeWrong(rawTermination) }), fc.constant({}))),
  },
  { requiredKeys: ["name", "lastState"] },
);
const rawOwnerRef = fc.record(
  {
    kind: maybeWrong(fc.constantFrom("ReplicaSet", "")),
    name: maybeWrong(text),
    uid: maybeWrong(text),
    controller: maybeWrong(fc.boolean()),
  },
  { requiredKeys: [] },
);

/** Pod-shaped objects: the right structure, with any field missing or of the wrong type. */
export const rawPod = fc.record(
  {
    metadata: rarelyWrong(
      fc.record(
        {
          namespace: rarelyWrong(id),
          name: rarelyWrong(id),
          uid: rarelyWrong(id),
          resourceVersion: rarelyWrong(id),
          deletionTimestamp: fc.oneof(fc.constant(null), fc.constantFrom("2025-03-04T10:20:00Z", new Date(0))),
          labels: maybeWrong(markerLabels),
          annotations: maybeWrong(markerAnnotations),
          ownerReferences: maybeWrong(fc.array(maybeWrong(rawOwnerRef), { maxLength: 3 })),
        },
        { requiredKeys: ["namespace", "name", "uid", "resourceVersion"] },
      ),
    ),
    spec: maybeWrong(
      fc.record(
        { nodeName: maybeWrong(text), restartPolicy: maybeWrong(fc.constantFrom("Always", "Never")) },
        { requiredKeys: [] },
      ),
    ),
    status: maybeWrong(
      fc.record(
        {
          phase: maybeWrong(fc.constantFrom("Pending", "Running", "Failed", "Succeeded")),
          initContainerStatuses: maybeWrong(fc.array(maybeWrong(rawInitStatus), { minLength: 1, maxLength: 4 })),
        },
        { requiredKeys: ["initContainerStatuses"] },
      ),
    ),
  },
  { requiredKeys: ["metadata", "status"] },
);

/** Keys and container names no rule reads. */
const noiseKey = fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !ruleKeys.has(k));

/** Labels, annotations and init container statuses no rule reads, to mix into a pod. */
export const noise = fc.record({
  labels: fc.dictionary(noiseKey, fc.string({ maxLength: 8 }), { maxKeys: 5 }),
  annotations: fc.dictionary(noiseKey, fc.string({ maxLength: 8 }), { maxKeys: 5 }),
  initStatuses: fc.array(
    fc.record({ name: noiseKey, state: rawState, lastState: fc.record({ terminated: rawTermination }) }),
    { maxLength: 3 },
  ),
  insertAt: fc.nat({ max: 4 }),
  resourceVersion: fc.constantFrom("7", "8"),
});

const rawTerminationOf = (t: Termination) => ({
  exitCode: t.exitCode,
  reason: t.reason,
  message: t.message,
  ...(t.startedAtMs !== undefined && { startedAt: new Date(t.startedAtMs).toISOString() }),
  ...(t.finishedAtMs !== undefined && { finishedAt: new Date(t.finishedAtMs).toISOString() }),
});

const rawStateOf = (s: ContainerState) =>
  typeof s !== "string" ? { terminated: rawTerminationOf(s) } : s === "unknown" ? {} : { [s]: {} };

/** The raw Pod JSON these facts came from: a valid pod, so noise tests see many broken ones. */
export const rawPodFrom = (f: PodFacts) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    namespace: f.namespace,
    name: f.name,
    uid: f.uid,
    resourceVersion: f.resourceVersion,
    labels: { ...f.labels },
    annotations: { ...f.annotations },
    ownerReferences: f.owner === undefined ? [] : [{ apiVersion: "apps/v1", ...f.owner, controller: true }],
    ...(f.deleting ? { deletionTimestamp: "2025-03-04T10:20:00Z" } : {}),
    ...(f.createdAtMs === undefined ? {} : { creationTimestamp: new Date(f.createdAtMs).toISOString() }),
  },
  spec: { nodeName: f.nodeName, restartPolicy: f.restartPolicy, hostNetwork: f.hostNetwork },
  status: {
    phase: f.phase,
    initContainerStatuses: f.initContainers.map((c) => ({
      name: c.name,
      ready: false,
      restartCount: c.restartCount,
      state: rawStateOf(c.state),
      lastState: c.lastTermination === undefined ? {} : { terminated: rawTerminationOf(c.lastTermination) },
    })),
  },
});
