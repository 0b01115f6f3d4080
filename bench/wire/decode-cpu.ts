// Micro-measure: CPU per watch event from its bytes to the facts, JSON against Kubernetes protobuf, on pods shaped as
// Istio's injector leaves them (bench/lib/pod-template.ts, ~15 KB as JSON), with the bytes as the real API server
// sends them (captured from a streamed list of each format). Also the wire cursor alone, src/kube/protobuf-reader.ts
// against protobufjs's Reader, on the same walk (why the decoder has its own).
//   node dist/bench/wire/decode-cpu.js [pods=200] [rounds=7]
// Prints medians over rounds of µs of CPU (user+system, process.cpuUsage) per event; each round decodes every
// captured event 20 times. The machine is shared: run it when quiet, and read the load it prints.
import { loadavg } from "node:os";
import type { V1Pod } from "@kubernetes/client-node";
import { CoreV1Api, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import protobuf from "protobufjs/minimal.js";
import { presetRule } from "../../src/detect/presets.js";
import type { Rule } from "../../src/detect/rule.js";
import { factsSchema, toPodFacts } from "../../src/detect/to-pod-facts.js";
import { projectionOf } from "../../src/informer/pod-projection.js";
import { KubeConfigCredentials } from "../../src/kube/kubeconfig-credentials.js";
import { openWatch } from "../../src/kube/pods-api.js";
import { openEnvelope, readWatchEventMessage } from "../../src/kube/protobuf-envelope.js";
import { decodeEnveloped, podObjects } from "../../src/kube/protobuf-objects.js";
import { ProtobufReader } from "../../src/kube/protobuf-reader.js";
import { KubeTransport } from "../../src/kube/transport.js";
import { startBenchCluster } from "../lib/cluster.js";
import { brokenStatus, healthyStatus, meshedPodBody } from "../lib/pod-template.js";

const PODS = Number(process.argv[2] ?? 200);
const ROUNDS = Number(process.argv[3] ?? 7);
const REPEAT = 20;
const NAMESPACE = "wire-bench";

const schema = factsSchema([presetRule("istio") as Rule]);
const objects = podObjects(projectionOf(schema));

/** The bodies of a streamed list of the namespace, as the server sent them, cut into events. */
async function capture(transport: KubeTransport, protobufWanted: boolean): Promise<Buffer[]> {
  const controller = new AbortController();
  const response = await openWatch(
    transport,
    "pods",
    { namespace: NAMESPACE },
    {
      resourceVersion: "",
      timeoutSeconds: 60,
      signal: controller.signal,
      initialEvents: true,
      protobuf: protobufWanted,
    },
  );
  const out: Buffer[] = [];
  let pending = Buffer.alloc(0);
  await new Promise<void>((resolve, reject) => {
    response.body.on("data", (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      const whole = events(pending, protobufWanted);
      out.push(...whole.map((event) => Buffer.from(event)));
      pending = Buffer.from(pending.subarray(whole.reduce((n, e) => n + e.length + (protobufWanted ? 4 : 1), 0)));
      if (out.length > PODS) {
        response.body.destroy();
        resolve();
      }
    });
    response.body.on("error", reject);
  });
  return out.slice(0, PODS);
}

/** Whole events: JSON lines, or the bytes of length-prefixed frames. */
function events(all: Buffer, protobufWanted: boolean): Buffer[] {
  const out: Buffer[] = [];
  let start = 0;
  if (!protobufWanted) {
    for (let newline = all.indexOf(10); newline >= 0; newline = all.indexOf(10, start)) {
      out.push(all.subarray(start, newline));
      start = newline + 1;
    }
    return out;
  }
  while (all.length - start >= 4 && start + 4 + all.readUInt32BE(start) <= all.length) {
    out.push(all.subarray(start + 4, start + 4 + all.readUInt32BE(start)));
    start += 4 + all.readUInt32BE(start);
  }
  return out;
}

/** µs of CPU per call of `each` over every event, median of ROUNDS. */
function cpuPerEvent(captured: readonly Buffer[], each: (bytes: Buffer) => unknown): number {
  const rounds: number[] = [];
  let sink = 0;
  for (let round = 0; round < ROUNDS + 1; round++) {
    const before = process.cpuUsage();
    for (let r = 0; r < REPEAT; r++) for (const bytes of captured) if (each(bytes) !== undefined) sink++;
    const used = process.cpuUsage(before);
    // The first round warms the JIT up.
    if (round > 0) rounds.push((used.user + used.system) / (REPEAT * captured.length));
  }
  if (sink < 0) console.log(sink);
  rounds.sort((a, b) => a - b);
  return rounds[Math.floor(rounds.length / 2)] as number;
}

// The same walk with either cursor: every field of the Pod and of its three messages, strings decoded, the rest
// skipped (what any decoder of it does at least).
function walkOurs(bytes: Buffer): number {
  const reader = new ProtobufReader(bytes);
  let fields = 0;
  for (let tag = reader.tag(bytes.length); tag !== 0; tag = reader.tag(bytes.length)) {
    const end = reader.delimitedEnd(bytes.length);
    for (let t = reader.tag(end); t !== 0; t = reader.tag(end)) {
      fields++;
      if ((t & 7) === 2) reader.string(end);
      else reader.skip(t & 7, end);
    }
  }
  return fields;
}

function walkProtobufjs(bytes: Buffer): number {
  const reader = protobuf.Reader.create(bytes);
  let fields = 0;
  while (reader.pos < reader.len) {
    reader.uint32();
    const end = reader.uint32() + reader.pos;
    while (reader.pos < end) {
      const t = reader.uint32();
      fields++;
      if ((t & 7) === 2) reader.string();
      else reader.skipType(t & 7);
    }
  }
  return fields;
}

const cluster = await startBenchCluster();
try {
  const kubeConfig = cluster.plane.kubeConfig();
  const api = kubeConfig.makeApiClient(CoreV1Api);
  await api.createNamespace({ body: { metadata: { name: NAMESPACE } } });
  for (let i = 0; i < PODS; i++) {
    const name = `reviews-${i}`;
    await api.createNamespacedPod({
      namespace: NAMESPACE,
      body: meshedPodBody(NAMESPACE, name, "reviews", "node-a") as V1Pod,
    });
    await api.patchNamespacedPodStatus(
      {
        namespace: NAMESPACE,
        name,
        body: { status: i % 10 === 0 ? brokenStatus("reviews") : healthyStatus("reviews", i) },
      },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
  }
  const transport = new KubeTransport(new KubeConfigCredentials(kubeConfig), { userAgent: "cni-repair/bench" });
  const json = await capture(transport, false);
  const proto = await capture(transport, true);
  await transport.close();
  const size = (list: readonly Buffer[]) => Math.round(list.reduce((n, b) => n + b.length, 0) / list.length);
  const jsonUs = cpuPerEvent(json, (line) => {
    const event = JSON.parse(line.toString("utf8")) as { object: unknown };
    return toPodFacts(event.object, schema);
  });
  const protoUs = cpuPerEvent(proto, (frame) =>
    toPodFacts(decodeEnveloped(readWatchEventMessage(frame).object, objects), schema),
  );
  const pods = proto.map((frame) => openEnvelope(readWatchEventMessage(frame).object).raw);
  const oursUs = cpuPerEvent(pods, walkOurs);
  const protobufjsUs = cpuPerEvent(pods, walkProtobufjs);
  console.log(
    JSON.stringify(
      {
        load: loadavg().map((l) => Math.round(l * 100) / 100),
        events: PODS,
        rounds: ROUNDS,
        bytesPerEvent: { json: size(json), protobuf: size(proto) },
        cpuUsPerEvent: { json: round(jsonUs), protobuf: round(protoUs), ratio: round(protoUs / jsonUs) },
        cursorWalkUsPerPod: { ours: round(oursUs), protobufjs: round(protobufjsUs) },
      },
      null,
      2,
    ),
  );
} finally {
  await cluster.stop();
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
