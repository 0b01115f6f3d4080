// The reflector reads a streamed list on as its watch: one request lists and watches, the cache is synced at the
// end bookmark, later events on the same stream apply, and when the stream ends it watches again from the last
// version, without initial events. The scripted transport at the seam; the real API server case is in
// test/integration/controller/streamed-list.test.ts.
import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "chai";
import { FactsStore } from "../../../src/informer/facts-store.js";
import { Reflector } from "../../../src/informer/reflector.js";
import type { WatchRestartReason } from "../../../src/observe/metrics.js";
import { type ScriptedWatch, scriptedTransport } from "../../support/scripted-transport.js";

type Facts = { readonly name: string; readonly phase: string };
const pod = (name: string, phase: string, resourceVersion: string) => ({
  metadata: { name, namespace: "n", resourceVersion },
  status: { phase },
});
const event = (type: string, object: unknown) => ({ type, object });
const END = event("BOOKMARK", {
  metadata: { resourceVersion: "10", annotations: { "k8s.io/initial-events-end": "true" } },
});

async function run(
  streams: ScriptedWatch[],
  until: (store: FactsStore<Facts>, dials: number) => boolean,
  stallTimeoutMs = 10_000,
) {
  const answers = [...streams];
  const { transport, calls } = scriptedTransport({
    request: () => ({ body: { items: [], metadata: { resourceVersion: "1" } } }),
    watch: () => answers.shift() ?? { events: [], hang: true },
  });
  const store = new FactsStore<Facts>(
    (facts) => facts.name,
    (a, b) => a.phase === b.phase,
  );
  const restarts: WatchRestartReason[] = [];
  let syncedAtDials = -1;
  const reflector = new Reflector<Facts>({
    transport,
    collection: "pods",
    scope: {},
    store,
    transform: (raw) => {
      const object = raw as { metadata: { name: string }; status: { phase: string } };
      return { name: object.metadata.name, phase: object.status.phase };
    },
    pageSize: 500,
    watchList: true,
    watchTimeoutMs: 60_000,
    stallTimeoutMs,
    backoff: { baseMs: 5, maxMs: 10, jitter: 0 },
    observer: {
      listed: () => {
        syncedAtDials = calls.filter((call) => call.kind === "watch").length;
      },
      watchEvent: () => {},
      watchRestart: (reason) => restarts.push(reason),
      listenerFailed: () => {},
    },
  });
  const stop = new AbortController();
  const running = reflector.run(stop.signal);
  const dials = () => calls.filter((call) => call.kind === "watch");
  const deadline = performance.now() + 10_000;
  while (performance.now() < deadline && !until(store, dials().length)) await sleep(5);
  stop.abort();
  await running;
  return { store, restarts, syncedAtDials, dials: dials(), pages: calls.filter((c) => c.kind === "request").length };
}

describe("informer/Reflector: a streamed list goes on as the watch", () => {
  it("one request lists and watches; when it ends, the next watch goes on from its last version", async () => {
    const first: ScriptedWatch = {
      events: [
        event("ADDED", pod("a", "Pending", "5")),
        event("ADDED", pod("b", "Running", "6")),
        END,
        event("MODIFIED", pod("a", "Running", "11")),
        event("DELETED", pod("b", "Running", "12")),
      ],
    };
    const second: ScriptedWatch = { events: [event("ADDED", pod("c", "Running", "13"))], hang: true };
    const seen = await run([first, second], (store) => store.get("c") !== undefined);
    expect(seen.syncedAtDials, "synced on the first request").to.equal(1);
    expect(seen.pages, "no LIST").to.equal(0);
    expect([...seen.store.values()]).to.deep.equal([
      { name: "a", phase: "Running" },
      { name: "c", phase: "Running" },
    ]);
    expect(seen.dials).to.have.length(2);
    expect(seen.dials[0]?.query).to.include({ sendInitialEvents: true, resourceVersion: "" });
    expect(seen.dials[1]?.query).to.include({ resourceVersion: "12" });
    expect(seen.dials[1]?.query).to.not.have.property("sendInitialEvents");
    expect(seen.restarts, "the first stream's end is a watch's end").to.deep.equal(["timeout"]);
  });

  it("an expired version on the stream (410) after the list lists again, as a watch's would", async () => {
    const first: ScriptedWatch = {
      events: [
        event("ADDED", pod("a", "Pending", "5")),
        END,
        event("ERROR", { kind: "Status", apiVersion: "v1", status: "Failure", code: 410, reason: "Expired" }),
      ],
    };
    const second: ScriptedWatch = { events: [event("ADDED", pod("z", "Running", "20")), END], hang: true };
    const seen = await run([first, second], (store) => store.get("z") !== undefined);
    expect(seen.restarts).to.deep.equal(["gone"]);
    expect(seen.dials[1]?.query, "listed again by a stream").to.include({ sendInitialEvents: true });
    expect([...seen.store.values()]).to.deep.equal([{ name: "z", phase: "Running" }]);
  });

  it("silent after its end bookmark: resumed as a plain watch, as quiet; a plain watch then silent is stalled", async () => {
    // The API server sends a stream no bookmark after its end one until its resource changes: no fault.
    const first: ScriptedWatch = { events: [event("ADDED", pod("a", "Running", "5")), END], hang: true };
    const second: ScriptedWatch = { events: [], hang: true };
    const third: ScriptedWatch = { events: [event("ADDED", pod("c", "Running", "13"))], hang: true };
    const seen = await run([first, second, third], (store) => store.get("c") !== undefined, 40);
    expect(seen.restarts).to.deep.equal(["quiet", "stalled"]);
    expect(seen.dials).to.have.length(3);
    for (const dial of seen.dials.slice(1)) {
      expect(dial.query).to.include({ resourceVersion: "10" });
      expect(dial.query).to.not.have.property("sendInitialEvents");
    }
  });

  it("silent after an event that followed its end bookmark: stalled, as any watch", async () => {
    const first: ScriptedWatch = {
      events: [event("ADDED", pod("a", "Pending", "5")), END, event("MODIFIED", pod("a", "Running", "11"))],
      hang: true,
    };
    const second: ScriptedWatch = { events: [event("ADDED", pod("c", "Running", "13"))], hang: true };
    const seen = await run([first, second], (store) => store.get("c") !== undefined, 40);
    expect(seen.restarts).to.deep.equal(["stalled"]);
    expect(seen.dials[1]?.query).to.include({ resourceVersion: "11" });
  });
});
