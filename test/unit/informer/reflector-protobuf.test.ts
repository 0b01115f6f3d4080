// The reflector reading pods as protobuf at the seam (scripted transport): lists and watch frames become the same
// facts as JSON; a pod the decoder cannot read is reported with its key and read again as JSON by a GET, never
// dropped; one without a readable key sends the reflector back to JSON; a JSON answer to a protobuf request is read
// as JSON. The real API server's side is test/integration/wire/.
import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "chai";
import type { PodFacts } from "../../../src/detect/facts.js";
import { presetRule } from "../../../src/detect/presets.js";
import type { Rule } from "../../../src/detect/rule.js";
import { factsSchema, toPodFacts } from "../../../src/detect/to-pod-facts.js";
import { podsAsProtobuf, projectionOf } from "../../../src/informer/pod-projection.js";
import { PodStore } from "../../../src/informer/pod-store.js";
import { Reflector } from "../../../src/informer/reflector.js";
import type { ObjectKey } from "../../../src/kube/protobuf-objects.js";
import { encodePod, encodePodList, encodeStatus, envelope, watchFrame } from "../../support/pod-protobuf-encoder.js";
import { type ScriptedAnswer, type ScriptedWatch, scriptedTransport } from "../../support/scripted-transport.js";
import { istioPodJson } from "../detect/raw-pod-fixture.js";

const schema = factsSchema([presetRule("istio") as Rule]);

function pod(name: string, resourceVersion: string) {
  const json = istioPodJson();
  json.metadata.name = name;
  json.metadata.resourceVersion = resourceVersion;
  return json;
}

/** A Pod message whose status has a phase of the wrong wire type: its metadata (the key) still reads. */
function brokenStatus(json: unknown): Buffer {
  // PodStatus { string phase = 1 } sent as a varint: tag (1 << 3 | 0), value 1; inside Pod's field 3.
  return Buffer.concat([encodePod(json), Buffer.from([(3 << 3) | 2, 2, (1 << 3) | 0, 1])]);
}

type Run = {
  readonly store: PodStore;
  readonly calls: ReturnType<typeof scriptedTransport>["calls"];
  readonly undecodable: (ObjectKey | undefined)[];
  stop(): Promise<void>;
};

function run(script: {
  request: (path: string, accept: string | undefined) => ScriptedAnswer;
  watch: (n: number, accept: string | undefined) => ScriptedWatch;
}): Run {
  let watches = 0;
  const { transport, calls } = scriptedTransport({
    request: (call) => script.request(call.path, call.accept),
    watch: (call) => script.watch(watches++, call.accept),
  });
  const store = new PodStore();
  const undecodable: (ObjectKey | undefined)[] = [];
  const reflector = new Reflector<PodFacts>({
    transport,
    collection: "pods",
    scope: { namespace: "bookinfo" },
    store,
    transform: (raw) => toPodFacts(raw, schema),
    protobuf: podsAsProtobuf(projectionOf(schema)),
    pageSize: 500,
    watchTimeoutMs: 60_000,
    stallTimeoutMs: 5_000,
    backoff: { baseMs: 5, maxMs: 10, jitter: 0 },
    observer: {
      listed: () => {},
      watchEvent: () => {},
      watchRestart: () => {},
      listenerFailed: () => {},
      undecodable: (key) => undecodable.push(key),
    },
  });
  const controller = new AbortController();
  const running = reflector.run(controller.signal);
  return {
    store,
    calls,
    undecodable,
    stop: async () => {
      controller.abort();
      await running;
    },
  };
}

async function until(condition: () => boolean): Promise<void> {
  const deadline = performance.now() + 10_000;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error("timed out");
    await sleep(5);
  }
}

const factsOf = (json: unknown) => toPodFacts(json, schema);

describe("informer/Reflector reading pods as protobuf", () => {
  it("lists and watches as protobuf: the facts JSON would give, asked for with JSON as the fallback", async () => {
    const a = pod("a", "10");
    const b = pod("b", "11");
    const bLater = pod("b", "12");
    bLater.status.phase = "Running";
    const r = run({
      request: () => ({ protobuf: encodePodList([encodePod(a), encodePod(b)], "11") }),
      watch: (n) =>
        n === 0
          ? {
              frames: [
                watchFrame("MODIFIED", envelope("Pod", encodePod(bLater))),
                watchFrame("DELETED", envelope("Pod", encodePod(a))),
              ],
              hang: true,
            }
          : { events: [], hang: true },
    });
    try {
      await until(() => r.store.get("bookinfo/a") === undefined && r.store.get("bookinfo/b")?.phase === "Running");
      expect(r.store.get("bookinfo/b")).to.deep.equal(factsOf(bLater));
      expect(r.calls[0]?.accept).to.equal("application/vnd.kubernetes.protobuf, application/json");
      expect(r.calls[1]?.accept).to.equal("application/vnd.kubernetes.protobuf, application/json");
      expect(r.calls[1]?.query.resourceVersion).to.equal("11");
      expect(r.undecodable).to.deep.equal([]);
    } finally {
      await r.stop();
    }
  });

  it("a listed pod the decoder cannot read is reported by its key and read by a GET as JSON", async () => {
    const a = pod("a", "10");
    const r = run({
      request: (path) =>
        path.endsWith("/pods/a") ? { body: a } : { protobuf: encodePodList([brokenStatus(a)], "10") },
      watch: () => ({ events: [], hang: true }),
    });
    try {
      await until(() => r.store.get("bookinfo/a") !== undefined);
      expect(r.store.get("bookinfo/a")).to.deep.equal(factsOf(a));
      expect(r.undecodable).to.deep.equal([{ namespace: "bookinfo", name: "a" }]);
      expect(r.calls.map((c) => c.path)).to.include("/api/v1/namespaces/bookinfo/pods/a");
    } finally {
      await r.stop();
    }
  });

  it("a watched pod the decoder cannot read is read by a GET as JSON; later events still apply", async () => {
    const a = pod("a", "10");
    const aNow = pod("a", "12");
    aNow.status.phase = "Running";
    let getAnswered = false;
    const c = pod("c", "13");
    const r = run({
      request: (path) => {
        if (!path.endsWith("/pods/a")) return { protobuf: encodePodList([], "9") };
        getAnswered = true;
        return { body: aNow };
      },
      watch: (n) =>
        n === 0
          ? {
              frames: [
                watchFrame("ADDED", envelope("Pod", brokenStatus(a))),
                watchFrame("ADDED", envelope("Pod", encodePod(c))),
              ],
              hang: true,
            }
          : { events: [], hang: true },
    });
    try {
      await until(
        () => getAnswered && r.store.get("bookinfo/a") !== undefined && r.store.get("bookinfo/c") !== undefined,
      );
      expect(r.store.get("bookinfo/a")).to.deep.equal(factsOf(aNow));
      expect(r.store.get("bookinfo/c")).to.deep.equal(factsOf(c));
      expect(r.undecodable).to.deep.equal([{ namespace: "bookinfo", name: "a" }]);
    } finally {
      await r.stop();
    }
  });

  it("an object without a readable key sends the reflector back to JSON, from the last event applied", async () => {
    const c = pod("c", "13");
    const r = run({
      request: () => ({ protobuf: encodePodList([], "9") }),
      watch: (n) =>
        n === 0
          ? { frames: [watchFrame("ADDED", Buffer.from("not an envelope"))], hang: true }
          : { events: [{ type: "ADDED", object: c }], hang: true },
    });
    try {
      await until(() => r.store.get("bookinfo/c") !== undefined);
      const watches = r.calls.filter((call) => call.kind === "watch");
      expect(watches[1]?.accept).to.equal(undefined);
      expect(watches[1]?.query.resourceVersion).to.equal("9");
      expect(r.undecodable).to.deep.equal([undefined]);
    } finally {
      await r.stop();
    }
  });

  it("reads JSON when the server answers JSON to a protobuf request", async () => {
    const a = pod("a", "10");
    const r = run({
      request: () => ({ body: { items: [a], metadata: { resourceVersion: "10" } } }),
      watch: () => ({ events: [], hang: true }),
    });
    try {
      await until(() => r.store.get("bookinfo/a") !== undefined);
      expect(r.store.get("bookinfo/a")).to.deep.equal(factsOf(a));
    } finally {
      await r.stop();
    }
  });

  it("a protobuf ERROR event is the watch's error: 410 relists", async () => {
    let lists = 0;
    const r = run({
      request: () => {
        lists++;
        return { protobuf: encodePodList([], String(lists)) };
      },
      watch: (n) =>
        n === 0
          ? {
              frames: [
                watchFrame(
                  "ERROR",
                  envelope(
                    "Status",
                    encodeStatus({ status: "Failure", message: "too old", reason: "Expired", code: 410 }),
                  ),
                ),
              ],
            }
          : { events: [], hang: true },
    });
    try {
      await until(() => lists >= 2);
      expect(r.undecodable).to.deep.equal([]);
    } finally {
      await r.stop();
    }
  });
});
