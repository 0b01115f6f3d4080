// Soak (issue 35, item 3): Lease renewals on the same HTTP/2 connection as heavy watch traffic, through cni-repair's
// own transport (src/kube/transport.ts: one undici agent, 4 MiB stream and 8 MiB connection windows). The question:
// can a watch whose reader stops reading hold the connection's receive window, so that the server cannot send the
// answer to a renewal and the leader misses its renew deadline?
//   node dist/bench/wire/renewal-soak.js [seconds=120] [writesPerSecond=200] [watches=4] [pods=100]
// On one transport: `watches` protobuf watches of the pods, each event decoded to the facts as the reflector does;
// one more watch that nobody reads (no 'data' listener: what a paused reader leaves behind); a Lease PUT every
// second with a 3 s timeout (the renewal of faults/controller-process's leader). Beside it, the control: a second
// transport (its own connection) renewing its own Lease at the same moments, in the same process, so what both
// show is the process and the machine, and what only the shared connection shows is the connection. Status writes
// on the pods at `writesPerSecond` (bench/lib/churn.ts: each one a real change, an event of ~12 KB on every watch)
// from a third connection. Prints renewal latency (p50, p99, max, over 3 s) on each, the event loop's delay, the
// watch bytes per second, the unread watch's buffered bytes, the TCP connections the shared transport opened, and
// the load average.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { loadavg } from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { presetRule } from "../../src/detect/presets.js";
import type { Rule } from "../../src/detect/rule.js";
import { factsSchema, toPodFacts } from "../../src/detect/to-pod-facts.js";
import { LeaseClient } from "../../src/election/lease-client.js";
import type { Lease } from "../../src/election/lease-record.js";
import { projectionOf } from "../../src/informer/pod-projection.js";
import { KubeConfigCredentials } from "../../src/kube/kubeconfig-credentials.js";
import { openWatch } from "../../src/kube/pods-api.js";
import { isProtobuf, readWatchEventMessage } from "../../src/kube/protobuf-envelope.js";
import { decodeEnveloped, podObjects } from "../../src/kube/protobuf-objects.js";
import { KubeTransport } from "../../src/kube/transport.js";
import { Churn } from "../lib/churn.js";
import { startBenchCluster } from "../lib/cluster.js";
import { BenchClient, inParallel } from "../lib/kube-client.js";
import { createRunningPod, ensureNamespace, type PodRef } from "../lib/population.js";
import { latencySummary } from "../report/stats.js";

const SECONDS = Number(process.argv[2] ?? 120);
const WRITES_PER_SECOND = Number(process.argv[3] ?? 200);
const WATCHES = Number(process.argv[4] ?? 4);
const PODS = Number(process.argv[5] ?? 100);
const NAMESPACE = "renewal-soak";
const RENEW_EVERY_MS = 1_000;
const RENEW_TIMEOUT_MS = 3_000;

const schema = factsSchema([presetRule("istio") as Rule]);
const objects = podObjects(projectionOf(schema));

/** Reads length-prefixed protobuf watch frames (or JSON lines) and decodes each event to the facts. */
function decodingReader(protobuf: boolean): { take(chunk: Uint8Array): void; readonly events: number } {
  let pending = Buffer.alloc(0);
  let events = 0;
  return {
    take(chunk) {
      pending = pending.length === 0 ? Buffer.from(chunk) : Buffer.concat([pending, chunk]);
      let start = 0;
      if (protobuf) {
        while (pending.length - start >= 4 && start + 4 + pending.readUInt32BE(start) <= pending.length) {
          const frame = pending.subarray(start + 4, start + 4 + pending.readUInt32BE(start));
          toPodFacts(decodeEnveloped(readWatchEventMessage(frame).object, objects), schema);
          events++;
          start += 4 + frame.length;
        }
      } else {
        for (let nl = pending.indexOf(10); nl >= 0; nl = pending.indexOf(10, start)) {
          toPodFacts((JSON.parse(pending.subarray(start, nl).toString("utf8")) as { object: unknown }).object, schema);
          events++;
          start = nl + 1;
        }
      }
      pending = pending.subarray(start);
    },
    get events() {
      return events;
    },
  };
}

const soakPod = (i: number): PodRef => ({ namespace: NAMESPACE, name: `soak-${i}`, app: `soak-${i % 30}`, index: i });

async function createLease(client: LeaseClient): Promise<Lease> {
  return await client.create(
    {
      metadata: { name: client.name, namespace: NAMESPACE },
      spec: { holderIdentity: "soak", leaseDurationSeconds: 15 },
    },
    { timeoutMs: RENEW_TIMEOUT_MS },
  );
}

/** Renews one Lease (PUT on its resourceVersion, as the elector does); each renewal's latency, failures included. */
function renewer(client: LeaseClient, first: Lease) {
  let lease = first;
  const latencies: number[] = [];
  let failed = 0;
  return {
    latencies,
    get failed() {
      return failed;
    },
    async renew(): Promise<void> {
      const sent = performance.now();
      try {
        // A MicroTime: microseconds.
        const renewTime = new Date().toISOString().replace("Z", "000Z");
        lease = await client.update({ ...lease, spec: { ...lease.spec, renewTime } }, { timeoutMs: RENEW_TIMEOUT_MS });
      } catch (error) {
        failed++;
        console.error(
          `${client.name}: renewal failed after ${Math.round(performance.now() - sent)} ms: ${String(error)}`,
        );
        lease = (await client.get({ timeoutMs: RENEW_TIMEOUT_MS }).catch(() => undefined)) ?? lease;
      }
      latencies.push(performance.now() - sent);
    },
  };
}

/** The inodes of this process's sockets. */
function socketInodes(): Set<string> {
  const inodes = new Set<string>();
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
      if (match) inodes.add(match[1] as string);
    } catch {
      // closed meanwhile
    }
  }
  return inodes;
}

/** Established TCP connections of this process to `port` whose socket is not in `before` (/proc/net/tcp*). */
function newConnectionsTo(port: number, before: ReadonlySet<string>): number {
  const now = socketInodes();
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  let count = 0;
  for (const file of ["/proc/self/net/tcp", "/proc/self/net/tcp6"]) {
    for (const line of readFileSync(file, "utf8").split("\n").slice(1)) {
      // Fields: sl, local address, remote address, state (01: established), …, inode (the tenth).
      const fields = line.trim().split(/\s+/);
      const inode = fields[9] ?? "";
      if (fields[2]?.endsWith(`:${hex}`) && fields[3] === "01" && now.has(inode) && !before.has(inode)) count++;
    }
  }
  return count;
}

const cluster = await startBenchCluster();
const setup = new BenchClient(cluster.access, "bench-setup/1");
const churner = new BenchClient(cluster.access, "bench-churn/1");
const credentials = () => new KubeConfigCredentials(cluster.plane.kubeConfig());
const transport = new KubeTransport(credentials(), { userAgent: "cni-repair/renewal-soak" });
const controlTransport = new KubeTransport(credentials(), { userAgent: "cni-repair/renewal-soak-control" });
const stop = new AbortController();
try {
  await ensureNamespace(setup, NAMESPACE);
  await inParallel(PODS, 32, async (i) => await createRunningPod(setup, soakPod(i), "soak-node"));
  // The control's connection and the bench clients' first, so every socket opened after is the shared transport's.
  const controlLeases = new LeaseClient(controlTransport, NAMESPACE, "soak-control");
  const control = renewer(controlLeases, await createLease(controlLeases));
  await churner.request("GET", "/version");
  const apiPort = Number(new URL(cluster.plane.server).port);
  const before = socketInodes();
  const leases = new LeaseClient(transport, NAMESPACE, "soak-leader");
  const shared = renewer(leases, await createLease(leases));

  const watch = async () =>
    await openWatch(
      transport,
      "pods",
      { namespace: NAMESPACE },
      { resourceVersion: "0", timeoutSeconds: SECONDS + 60, signal: stop.signal, protobuf: true },
    );
  const readers = [];
  let watchBytes = 0;
  // The API server closes a watcher that does not keep up (its buffer full): the reflector would watch again.
  let watchesEnded = 0;
  for (let w = 0; w < WATCHES; w++) {
    const response = await watch();
    const reader = decodingReader(isProtobuf(response.contentType));
    response.body.on("data", (chunk) => {
      watchBytes += chunk.length;
      reader.take(chunk);
    });
    response.body.on("error", () => {});
    response.body.on("end", () => watchesEnded++);
    readers.push(reader);
  }
  // The watch nobody reads: the transport keeps its chunks until a 'data' listener comes (streamed-response.ts).
  const unread = await watch();
  unread.body.on("error", () => {});

  const churn = new Churn(churner, PODS, WRITES_PER_SECOND, soakPod);
  churn.start();
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  let connections = 0;
  const began = performance.now();
  while (performance.now() - began < SECONDS * 1000) {
    const sent = performance.now();
    await Promise.all([shared.renew(), control.renew()]);
    connections = Math.max(connections, newConnectionsTo(apiPort, before));
    await sleep(Math.max(0, RENEW_EVERY_MS - (performance.now() - sent)));
  }
  const seconds = (performance.now() - began) / 1000;
  const writes = await churn.stop();
  loop.disable();
  let unreadBytes = 0;
  // Reading it now drains what it kept: its bytes had all arrived, none left waiting in a window.
  unread.body.on("data", (chunk) => {
    unreadBytes += chunk.length;
  });
  await sleep(100);
  const ms = (value: number) => Math.round(value * 10) / 10;
  const figures = (r: ReturnType<typeof renewer>) => {
    const summary = latencySummary(r.latencies);
    return {
      renewals: r.latencies.length,
      failed: r.failed,
      over3s: r.latencies.filter((l) => l > RENEW_TIMEOUT_MS).length,
      ms: { p50: ms(summary.p50), p99: ms(summary.p99), max: ms(summary.max) },
    };
  };
  console.log(
    JSON.stringify(
      {
        load: loadavg().map((l) => Math.round(l * 100) / 100),
        seconds: Math.round(seconds),
        statusWritesPerSecond: Math.round(writes.ok / seconds),
        writesFailedOrDropped: writes.failed + writes.dropped,
        watches: WATCHES,
        eventsDecodedPerWatch: readers.map((reader) => reader.events),
        watchesEndedByTheServer: watchesEnded,
        watchMBPerSecond: Math.round((watchBytes / seconds / 2 ** 20) * 100) / 100,
        unreadWatchBufferedMB: Math.round((unreadBytes / 2 ** 20) * 100) / 100,
        sharedTransportTcpConnections: connections,
        eventLoopDelayMs: { p99: ms(loop.percentile(99) / 1e6), max: ms(loop.max / 1e6) },
        renewalOnTheWatchesConnection: figures(shared),
        renewalOnItsOwnConnection: figures(control),
      },
      null,
      2,
    ),
  );
} finally {
  stop.abort();
  await transport.close();
  await controlTransport.close();
  await setup.close();
  await churner.close();
  await cluster.stop();
}
