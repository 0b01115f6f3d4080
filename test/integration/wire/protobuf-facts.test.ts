// The differential test on the real API server: the same pods read once as JSON and once as Kubernetes protobuf give
// identical facts, for every rule schema and for the agent gate — listed by pages, streamed (WatchList) and watched
// as they change. The pods: every shape the tests build (test/harness/pod-fixtures.ts), the statuses a real kubelet
// wrote (test/fixtures/kubelet), a pod shaped as Istio's injector leaves one (bench/lib/pod-template.ts), a pod being
// deleted, a mirror pod, and the largest pod this API server accepts. It also pins the wire format as the server
// speaks it: the Content-Types, and a watch frame as a 4-byte length and a bare WatchEvent (no envelope).
import { readdirSync, readFileSync } from "node:fs";
import { CoreV1Api, PatchStrategy, setHeaderOptions, type V1Pod } from "@kubernetes/client-node";
import { expect } from "chai";
import { brokenStatus, healthyStatus, meshedPodBody } from "../../../bench/lib/pod-template.js";
import { presetRule } from "../../../src/detect/presets.js";
import type { Rule } from "../../../src/detect/rule.js";
import { type FactsSchema, factsSchema, toPodFacts } from "../../../src/detect/to-pod-facts.js";
import { toAgentFacts } from "../../../src/informer/cni-agent-pods.js";
import { AGENT_PROJECTION, projectionOf } from "../../../src/informer/pod-projection.js";
import type { WatchEvent } from "../../../src/informer/watch-lines.js";
import { readWatch } from "../../../src/informer/watch-stream.js";
import { KubeConfigCredentials } from "../../../src/kube/kubeconfig-credentials.js";
import type { PodProjection } from "../../../src/kube/pod-protobuf.js";
import { listPage, openWatch } from "../../../src/kube/pods-api.js";
import { type ProtobufObjects, podObjects, UndecodableObject } from "../../../src/kube/protobuf-objects.js";
import { KubeTransport } from "../../../src/kube/transport.js";
import { repositoryFile } from "../../harness/binaries.js";
import { createPodInState } from "../../harness/broken-pods.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { acme } from "../../unit/detect/arbitraries.js";

const rule = (name: string) => presetRule(name) as Rule;
const SCHEMAS: readonly [string, FactsSchema][] = [
  ["istio and linkerd", factsSchema([rule("istio"), rule("linkerd")], { labelKeys: ["cni-repair.io/broken"] })],
  ["with messages", factsSchema([rule("istio"), acme])],
  ["ambient (sandbox time)", factsSchema([rule("istio-ambient"), rule("istio")])],
];

type Reading = { readonly podFacts: unknown[]; readonly agentFacts: unknown };

/** What each consumer makes of one pod object, JSON or the decoder's view. */
function facts(object: unknown, schemas: readonly FactsSchema[] = SCHEMAS.map(([, s]) => s)): Reading {
  return { podFacts: schemas.map((schema) => toPodFacts(object, schema)), agentFacts: toAgentFacts(object) };
}

/** Reads facts per pod key, JSON or protobuf, with each schema's own projection (and the agents'). */
type Reader = (objects: ProtobufObjects | undefined) => Promise<Map<string, unknown>>;

const keyOf = (object: unknown): string => {
  const metadata = (object as { metadata: { namespace: string; name: string } }).metadata;
  return `${metadata.namespace}/${metadata.name}`;
};

/** Reads with JSON and then once per projection with protobuf, and gives each pod's facts both ways. */
async function bothWays(read: Reader): Promise<{ json: Map<string, Reading>; protobuf: Map<string, Reading> }> {
  const json = new Map<string, Reading>();
  for (const [key, object] of await read(undefined)) json.set(key, facts(object));
  const protobuf = new Map<string, Reading>();
  const projections: [PodProjection, (object: unknown) => void][] = [];
  for (const [, schema] of SCHEMAS) {
    projections.push([
      projectionOf(schema),
      (object) => {
        const key = keyOf(object);
        const reading = protobuf.get(key) ?? { podFacts: [], agentFacts: undefined };
        protobuf.set(key, { ...reading, podFacts: [...reading.podFacts, toPodFacts(object, schema)] });
      },
    ]);
  }
  projections.push([
    AGENT_PROJECTION,
    (object) => {
      const key = keyOf(object);
      const reading = protobuf.get(key) ?? { podFacts: [], agentFacts: undefined };
      protobuf.set(key, { ...reading, agentFacts: toAgentFacts(object) });
    },
  ]);
  for (const [projection, keep] of projections) {
    for (const object of (await read(podObjects(projection))).values()) {
      expect(object, "every pod decodes").not.to.be.instanceOf(UndecodableObject);
      keep(object);
    }
  }
  return { json, protobuf };
}

/** The real-kubelet recordings, each named after its file (several stages of one pod share its name). */
const recordings = (): { name: string; pod: V1Pod }[] =>
  readdirSync(repositoryFile("test/fixtures/kubelet"))
    .filter((file) => file.endsWith(".json"))
    .map((file) => ({
      name: `recorded-${file.replace(/\.json$/, "")}`,
      pod: JSON.parse(readFileSync(repositoryFile(`test/fixtures/kubelet/${file}`), "utf8")) as V1Pod,
    }));

/** A recorded pod created afresh in `namespace` (server-set fields dropped), its recorded status written back. */
async function replay(api: CoreV1Api, namespace: string, name: string, recorded: V1Pod): Promise<void> {
  const { metadata = {}, spec, status } = recorded;
  const body: V1Pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace,
      ...(metadata.labels && { labels: metadata.labels }),
      ...(metadata.annotations && { annotations: metadata.annotations }),
      ...(metadata.ownerReferences && { ownerReferences: metadata.ownerReferences }),
    },
    ...(spec && { spec: { ...spec, serviceAccountName: "default", serviceAccount: "default" } }),
  };
  await api.createNamespacedPod({ namespace, body });
  if (status) await writeStatus(api, namespace, name, status);
}

async function writeStatus(api: CoreV1Api, namespace: string, name: string, status: unknown): Promise<void> {
  await api.patchNamespacedPodStatus(
    { namespace, name, body: { status } },
    setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
  );
}

/**
 * The largest pod the server takes, to within 16 KiB: a sidecar-injected pod whose proxy carries an env value of
 * the size found by bisection (the bound is the server's request and storage limits, not ours).
 */
async function createLargestPod(api: CoreV1Api, namespace: string): Promise<number> {
  const attempt = async (size: number, name: string): Promise<boolean> => {
    const body = meshedPodBody(namespace, name, "largest", "node-a") as V1Pod;
    body.spec?.containers[0]?.env?.push({ name: "FILLER", value: "x".repeat(size) });
    try {
      await api.createNamespacedPod({ namespace, body });
      return true;
    } catch {
      return false;
    }
  };
  let low = 0;
  let high = 4 * 1024 * 1024;
  for (let i = 0; high - low > 16 * 1024; i++) {
    const middle = Math.floor((low + high) / 2);
    if (await attempt(middle, `probe-${i}`)) {
      low = middle;
      await api.deleteNamespacedPod({ namespace, name: `probe-${i}`, gracePeriodSeconds: 0 });
    } else high = middle;
  }
  expect(await attempt(low, "largest"), "the largest size found is taken again").to.equal(true);
  await writeStatus(api, namespace, "largest", brokenStatus("largest"));
  return low;
}

describe("wire: pods as protobuf give the facts JSON gives, on the real API server", function () {
  this.timeout(180_000);
  let api: CoreV1Api;
  let transport: KubeTransport;
  let namespace: string;
  let largestBytes = 0;

  before(async () => {
    const plane = controlPlane();
    api = plane.kubeConfig().makeApiClient(CoreV1Api);
    transport = new KubeTransport(new KubeConfigCredentials(plane.kubeConfig()), { userAgent: "cni-repair/test" });
    namespace = await createTestNamespace(api, "wire");
    // Every shape the controller tests build.
    const shapes = [
      { name: "istio-loop", spec: {}, state: {} },
      {
        name: "istio-never",
        spec: { restartPolicy: "Never" as const },
        state: { validator: { kind: "failed" as const, exitCode: 126 }, phase: "Failed" as const },
      },
      { name: "istio-ok", spec: {}, state: { validator: { kind: "succeeded" as const }, phase: "Running" as const } },
      { name: "linkerd-loop", spec: { mesh: "linkerd" as const }, state: {} },
      { name: "plain", spec: { mesh: "none" as const }, state: { validator: { kind: "succeeded" as const } } },
      { name: "bare", spec: { bare: true }, state: {} },
      { name: "host-network", spec: { hostNetwork: true }, state: {} },
      { name: "job-owned", spec: { owner: { kind: "Job", name: "batch-1", apiVersion: "batch/v1" } }, state: {} },
      {
        name: "mirror",
        spec: {
          owner: { kind: "Node", name: "node-a", apiVersion: "v1" },
          annotations: { "kubernetes.io/config.mirror": "abc" },
        },
        state: {},
      },
      {
        name: "ambient",
        spec: {
          mesh: "none" as const,
          labels: { "istio.io/dataplane-mode": "ambient" },
          annotations: { "ambient.istio.io/redirection": "enabled" },
        },
        state: { validator: { kind: "succeeded" as const }, phase: "Running" as const },
      },
      { name: "labelled", spec: { labels: { "cni-repair.io/broken": "true" } }, state: {} },
    ];
    for (const { name, spec, state } of shapes) await createPodInState(api, { namespace, name, ...spec }, state);
    for (const { name, pod } of recordings()) await replay(api, namespace, name, pod);
    // As Istio's injector leaves a pod (~15 KB), running and broken.
    await api.createNamespacedPod({
      namespace,
      body: meshedPodBody(namespace, "injected-ok", "reviews", "node-a") as V1Pod,
    });
    await writeStatus(api, namespace, "injected-ok", healthyStatus("reviews", 1));
    await api.createNamespacedPod({
      namespace,
      body: meshedPodBody(namespace, "injected-broken", "ratings", "node-a") as V1Pod,
    });
    await writeStatus(api, namespace, "injected-broken", brokenStatus("ratings"));
    // Being deleted: without a kubelet a scheduled pod keeps its deletionTimestamp for the grace period.
    await createPodInState(api, { namespace, name: "deleting" }, {});
    await api.deleteNamespacedPod({ namespace, name: "deleting", gracePeriodSeconds: 600 });
    largestBytes = await createLargestPod(api, namespace);
  });

  after(async () => {
    await transport?.close();
  });

  it("creates pods of every shape, the largest as large as the server takes", async () => {
    const pods = await api.listNamespacedPod({ namespace });
    const names = pods.items.map((pod) => pod.metadata?.name);
    expect(names).to.include.members([
      "largest",
      "injected-broken",
      "deleting",
      "mirror",
      ...recordings().map((r) => r.name),
    ]);
    expect(largestBytes, "the largest pod's filler").to.be.greaterThan(500 * 1024);
    console.log(`      largest pod accepted: ${Math.round(largestBytes / 1024)} KiB of env on top of an injected pod`);
  });

  const listed: Reader = async (objects) => {
    const out = new Map<string, unknown>();
    let continueToken: string | undefined;
    do {
      const page = await listPage(transport, "pods", { namespace }, { limit: 7, continueToken }, objects);
      for (const item of page.items) out.set(keyOf(item), item);
      continueToken = page.continueToken;
    } while (continueToken !== undefined);
    return out;
  };

  it("a paginated LIST: the same facts for every pod, every schema, and the agent gate", async () => {
    const { json, protobuf } = await bothWays(listed);
    expect(json.size).to.be.greaterThan(20);
    expect([...protobuf.keys()].sort()).to.deep.equal([...json.keys()].sort());
    for (const [key, reading] of json) expect(protobuf.get(key), key).to.deep.equal(reading);
  });

  it("the server answers protobuf when asked: the list's Content-Type", async () => {
    const answer = await transport.requestBytes("list", "GET", `/api/v1/namespaces/${namespace}/pods`, {
      accept: "application/vnd.kubernetes.protobuf, application/json",
      query: { limit: 1 },
    });
    expect(answer.contentType).to.equal("application/vnd.kubernetes.protobuf");
    expect([...answer.bytes.subarray(0, 4)]).to.deep.equal([0x6b, 0x38, 0x73, 0x00]);
  });

  /** The initial events of a streamed list (WatchList), until its initial-events-end bookmark. */
  const streamed: Reader = async (objects) => {
    const out = new Map<string, unknown>();
    const controller = new AbortController();
    const response = await openWatch(
      transport,
      "pods",
      { namespace },
      {
        resourceVersion: "",
        timeoutSeconds: 60,
        signal: controller.signal,
        initialEvents: true,
        protobuf: objects !== undefined,
      },
    );
    expect(response.contentType).to.equal(
      objects ? "application/vnd.kubernetes.protobuf;stream=watch" : "application/json",
    );
    let ended = false;
    await readWatch(
      response,
      objects,
      () => {},
      (event: WatchEvent, stop) => {
        if (event.type === "ADDED") out.set(keyOf(event.object), event.object);
        const annotations = (event.object as { metadata?: { annotations?: Record<string, string> } }).metadata
          ?.annotations;
        if (event.type === "BOOKMARK" && annotations?.["k8s.io/initial-events-end"] === "true") {
          ended = true;
          stop();
        }
      },
    );
    expect(ended, "the initial-events-end bookmark was read").to.equal(true);
    return out;
  };

  it("a streamed list (WatchList): the same facts, and its end bookmark read from protobuf", async () => {
    const { json, protobuf } = await bothWays(streamed);
    expect([...protobuf.keys()].sort()).to.deep.equal([...json.keys()].sort());
    for (const [key, reading] of json) expect(protobuf.get(key), key).to.deep.equal(reading);
  });

  it("watch events as pods change: the same facts from both streams, each frame a length and a bare WatchEvent", async () => {
    const { resourceVersion } = await listPage(
      transport,
      "pods",
      { namespace },
      { limit: 1, continueToken: undefined },
    );
    const controller = new AbortController();
    const watches = [undefined, podObjects(projectionOf(SCHEMAS[0]?.[1] as FactsSchema))].map(async (objects) => {
      const events: [string, unknown][] = [];
      const response = await openWatch(
        transport,
        "pods",
        { namespace },
        {
          resourceVersion,
          timeoutSeconds: 60,
          signal: controller.signal,
          protobuf: objects !== undefined,
        },
      );
      const read = readWatch(
        response,
        objects,
        () => {},
        (event, stop) => {
          events.push([event.type, event.object]);
          if (event.type === "DELETED") stop();
        },
      );
      return { events, read };
    });
    const [jsonWatch, protobufWatch] = await Promise.all(watches);
    await writeStatus(api, namespace, "injected-ok", brokenStatus("reviews"));
    await api.patchNamespacedPod(
      { namespace, name: "istio-loop", body: { metadata: { labels: { "cni-repair.io/broken": "true" } } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
    await api.deleteNamespacedPod({ namespace, name: "bare", gracePeriodSeconds: 0 });
    await Promise.all([jsonWatch?.read, protobufWatch?.read]);
    const schema = [SCHEMAS[0]?.[1] as FactsSchema];
    const summary = (events: [string, unknown][]) => events.map(([type, object]) => [type, facts(object, schema)]);
    expect(summary(protobufWatch?.events ?? [])).to.deep.equal(summary(jsonWatch?.events ?? []));
    // Two updates, then the delete (a MODIFIED setting deletionTimestamp may come before the DELETED).
    const types = (jsonWatch?.events ?? []).map(([type]) => type);
    expect(types.slice(0, 2)).to.deep.equal(["MODIFIED", "MODIFIED"]);
    expect(types.at(-1)).to.equal("DELETED");

    // The bytes themselves: a frame is a 4-byte big-endian length and a WatchEvent message (field 1, the type).
    const raw = await transport.stream(`/api/v1/namespaces/${namespace}/pods`, {
      accept: "application/vnd.kubernetes.protobuf;stream=watch",
      query: { watch: true, resourceVersion, timeoutSeconds: 5 },
      signal: AbortSignal.timeout(20_000),
    });
    expect(raw.contentType).to.equal("application/vnd.kubernetes.protobuf;stream=watch");
    const first = await new Promise<Buffer>((resolve, reject) => {
      raw.body.on("data", (chunk) => {
        resolve(Buffer.from(chunk));
        raw.body.destroy();
      });
      raw.body.on("error", reject);
    });
    expect(first.readUInt32BE(0), "frame length").to.be.greaterThan(100);
    expect(first[4], "WatchEvent field 1 (type), length-delimited: no k8s envelope around the event").to.equal(0x0a);
    expect(first.subarray(6, 6 + (first[5] ?? 0)).toString()).to.equal("MODIFIED");
  });
});
