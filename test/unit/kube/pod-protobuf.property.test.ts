// Property: a pod read as protobuf gives exactly the facts the same pod gives as JSON, for every rule schema, with
// the fields the API allows to be absent left out or written as zero values, and with fields of no Kubernetes
// version added everywhere (they are skipped). The pods are generated in the API server's JSON shape and encoded by
// an independent encoder (protobufjs's Writer, test/support/pod-protobuf-encoder.ts).
import { expect } from "chai";
import fc from "fast-check";
import { presetRule } from "../../../src/detect/presets.js";
import type { Rule } from "../../../src/detect/rule.js";
import { factsSchema, toPodFacts } from "../../../src/detect/to-pod-facts.js";
import { toAgentFacts } from "../../../src/informer/cni-agent-pods.js";
import { AGENT_PROJECTION, projectionOf } from "../../../src/informer/pod-projection.js";
import { decodePod, podKeyOf } from "../../../src/kube/pod-protobuf.js";
import { type EncodeOptions, encodePod } from "../../support/pod-protobuf-encoder.js";
import { acme, istio, linkerd } from "../detect/arbitraries.js";

const ambient = presetRule("istio-ambient") as Rule;
const schemas = [
  ["istio and linkerd (no messages, no sandbox time)", factsSchema([istio, linkerd])],
  ["every validator rule (messages)", factsSchema([istio, linkerd, acme], { labelKeys: ["app"] })],
  ["ambient and istio (sandbox time)", factsSchema([ambient, istio])],
] as const;

const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
/** What `omitempty` leaves: absent or not empty. */
const omitEmpty = (values: readonly string[]) => opt(fc.constantFrom(...values.filter((v) => v !== "")));

/** RFC 3339 in whole seconds, as the API's JSON writes a time; never the epoch (stored as the zero time). */
const rfc3339 = fc
  .integer({ min: -2_000_000_000, max: 4_000_000_000 })
  .filter((s) => s !== 0)
  .map((s) => new Date(s * 1000).toISOString().replace(".000Z", "Z"));
/** A non-pointer time: null when zero. */
const time = fc.option(rfc3339, { nil: null });
const text = fc.constantFrom("", "a", "iptables redirect missing", "ünïcödé ✓", "x".repeat(300));
const key = fc.constantFrom(
  "app",
  "sidecar.istio.io/status",
  "linkerd.io/control-plane-ns",
  "mesh.acme.io/enabled",
  "istio.io/dataplane-mode",
  "ambient.istio.io/redirection",
  "kubernetes.io/config.mirror",
  "k8s.io/initial-events-end",
  "unrelated.example.com/key",
  // As many UTF-8 bytes as wanted keys, and not them (the decoder filters by length first).
  "istio.io/dataplane-modf",
  "kubernetes.io/config.mirrö",
  "__proto__",
  "constructor",
  // A key of 128 bytes or more: its length takes two bytes on the wire.
  `example.com/${"k".repeat(120)}`,
);
const stringMap = opt(fc.dictionary(key, fc.constantFrom("", "true", "enabled", "ambient", "none", "linkerd")));

const terminated = fc.record(
  {
    exitCode: fc.constantFrom(0, 1, 126, 95, 42, -1, 2_147_483_647, -2_147_483_648),
    signal: opt(fc.constantFrom(9, 15)),
    reason: omitEmpty(["Error", "Completed", "OOMKilled"]),
    message: omitEmpty(["", "iptables redirect missing", "dns failed"]),
    startedAt: time,
    finishedAt: time,
    containerID: omitEmpty(["containerd://abc"]),
  },
  { requiredKeys: ["exitCode", "startedAt", "finishedAt"] },
);
/** ContainerState: every pointer absent, or some set (the kubelet sets one, the API allows any). */
const state = fc.record(
  {
    waiting: fc.record({ reason: omitEmpty(["CrashLoopBackOff", "PodInitializing"]), message: omitEmpty(["m"]) }),
    running: fc.record({ startedAt: time }),
    terminated,
  },
  { requiredKeys: [] },
);
const containerStatus = fc.record({
  name: fc.constantFrom("istio-validation", "linkerd-network-validator", "acme-net-check", "istio-proxy", "app", ""),
  state,
  lastState: state,
  ready: fc.boolean(),
  restartCount: fc.constantFrom(0, 1, 5, -3),
  image: fc.constantFrom("docker.io/istio/proxyv2:1.24.0", ""),
  imageID: fc.constant(""),
  started: opt(fc.boolean()),
});
const condition = fc.record(
  {
    // The last two as long as the first two (the decoder filters types by length first).
    type: fc.constantFrom(
      "PodReadyToStartContainers",
      "Ready",
      "Initialized",
      "PodScheduled",
      "PodReadyToStartContainerz",
      "Unset",
    ),
    status: fc.constantFrom("True", "False", "Unknown"),
    lastProbeTime: time,
    lastTransitionTime: time,
    reason: omitEmpty(["ContainersNotReady"]),
    message: omitEmpty(["containers with unready status: [app]"]),
  },
  { requiredKeys: ["type", "status", "lastProbeTime", "lastTransitionTime"] },
);
const ownerReference = fc.record(
  {
    apiVersion: fc.constantFrom("apps/v1", "v1"),
    kind: fc.constantFrom("ReplicaSet", "Node", "Job", ""),
    name: fc.constantFrom("reviews-v1", ""),
    uid: fc.constantFrom("5a0e0e3c-2b7b-4c53-8f0f-3f4d3a1f1d11", ""),
    controller: opt(fc.boolean()),
  },
  { requiredKeys: ["apiVersion", "kind", "name", "uid"] },
);
const container = fc.record({
  name: fc.constantFrom("app", "istio-proxy"),
  image: fc.constant("registry.example/app:1"),
  args: fc.array(text, { maxLength: 3 }),
  env: fc.array(fc.record({ name: fc.constantFrom("A", "PROXY_CONFIG"), value: text }), { maxLength: 4 }),
});

/** A pod as the API server's JSON has it; the fields it may omit are sometimes omitted. */
const podJson = fc.record({
  apiVersion: fc.constant("v1"),
  kind: fc.constant("Pod"),
  metadata: fc.record(
    {
      name: omitEmpty(["reviews-v1-x2x4q", "p"]),
      generateName: omitEmpty(["reviews-v1-"]),
      namespace: omitEmpty(["bookinfo", "kube-system"]),
      uid: omitEmpty(["0b5c3f6e-6a43-4c59-9d1f-1d1c7a0c9e01"]),
      resourceVersion: omitEmpty(["4711023", "1"]),
      creationTimestamp: time,
      deletionTimestamp: opt(time),
      labels: stringMap,
      annotations: stringMap,
      ownerReferences: opt(fc.array(ownerReference, { maxLength: 3 })),
      finalizers: opt(fc.array(fc.constant("example.com/f"), { maxLength: 2 })),
      managedFields: opt(
        fc.array(fc.record({ manager: fc.constant("kubelet"), operation: fc.constant("Update"), time }), {
          maxLength: 2,
        }),
      ),
    },
    { requiredKeys: ["creationTimestamp"] },
  ),
  spec: fc.record(
    {
      containers: fc.array(container, { maxLength: 2 }),
      initContainers: opt(fc.array(container, { maxLength: 2 })),
      restartPolicy: omitEmpty(["Always", "Never", "OnFailure"]),
      serviceAccountName: omitEmpty(["default"]),
      nodeName: omitEmpty(["node-a", "node-b"]),
      hostNetwork: opt(fc.constant(true)),
    },
    { requiredKeys: ["containers"] },
  ),
  status: fc.record(
    {
      phase: omitEmpty(["Pending", "Running", "Failed", "Succeeded", "Unknown"]),
      conditions: opt(fc.array(condition, { maxLength: 5 })),
      message: omitEmpty(["m"]),
      hostIP: omitEmpty(["10.0.0.1"]),
      startTime: opt(rfc3339),
      initContainerStatuses: opt(fc.array(containerStatus, { maxLength: 3 })),
      containerStatuses: opt(fc.array(containerStatus, { maxLength: 3 })),
      qosClass: omitEmpty(["Burstable"]),
    },
    { requiredKeys: [] },
  ),
});

const encodeOptions: fc.Arbitrary<EncodeOptions> = fc.record({
  zeros: fc.constantFrom("write", "omit"),
  unknown: fc.boolean(),
  // The decoder passes over an entry laid out as encoders write it by its key's length alone; the others it reads.
  mapEntries: fc.constantFrom("key-value", "value-key", "with-unknown"),
});

/** JSON.parse(JSON.stringify(x)): drops undefined as the wire would. */
const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

describe("pods as protobuf give the facts the same pods give as JSON (property)", () => {
  for (const [name, schema] of schemas) {
    it(`pod facts, ${name}`, () => {
      const projection = projectionOf(schema);
      fc.assert(
        fc.property(podJson, encodeOptions, (generated, options) => {
          const json = asJson(generated);
          const view = decodePod(encodePod(json, options), projection);
          expect(toPodFacts(view, schema)).to.deep.equal(toPodFacts(json, schema));
        }),
        { numRuns: 400 },
      );
    });
  }

  it("agent facts", () => {
    fc.assert(
      fc.property(podJson, encodeOptions, (generated, options) => {
        const json = asJson(generated);
        const view = decodePod(encodePod(json, options), AGENT_PROJECTION);
        expect(toAgentFacts(view)).to.deep.equal(toAgentFacts(json));
      }),
      { numRuns: 400 },
    );
  });

  it("the pod's key from bytes that do not decode, as long as its metadata reads", () => {
    fc.assert(
      fc.property(podJson, encodeOptions, (generated, options) => {
        const json = asJson(generated) as { metadata: { name?: string; namespace?: string } };
        const bytes = encodePod(json, options);
        const { name, namespace } = json.metadata;
        expect(podKeyOf(bytes)).to.deep.equal(name && namespace ? { namespace, name } : undefined);
      }),
      { numRuns: 200 },
    );
  });
});
