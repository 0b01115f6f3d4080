// The reflector's state machine against a scripted API server: paged list, watch, bookmarks, 410 → relist, a
// stalled watch, Retry-After. The real-API-server proofs are in test/integration/controller (watch-faults,
// paged-list); these show each transition in milliseconds.
import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "chai";
import { FactsStore, type StoreChange } from "../../../src/informer/facts-store.js";
import { Reflector } from "../../../src/informer/reflector.js";
import type { WatchRestartReason } from "../../../src/observe/metrics.js";
import { type Script, type ScriptedCall, scriptedTransport } from "../../support/scripted-transport.js";

type Item = { readonly name: string; readonly value: string };
const raw = (name: string, resourceVersion: string, value = "v1") => ({ metadata: { name, resourceVersion }, value });
const event = (type: string, object: unknown) => ({ type, object });
const listAnswer = (items: unknown[], resourceVersion: string, continueToken?: string) => ({
  body: { items, metadata: { resourceVersion, ...(continueToken && { continue: continueToken }) } },
});

type StartOptions = {
  stallTimeoutMs?: number;
  pageSize?: number;
  /** Subscribed before the one that records the changes. */
  listeners?: readonly ((change: StoreChange<Item>) => void)[];
};

function start(script: Script, options: StartOptions = {}) {
  const { transport, calls } = scriptedTransport(script);
  const restarts: WatchRestartReason[] = [];
  const changes: StoreChange<Item>[] = [];
  const listenerFailures: { key: string; error: string }[] = [];
  const reflector = new Reflector<Item>({
    transport,
    collection: "pods",
    scope: { namespace: "shop" },
    store: new FactsStore<Item>(
      (item) => item.name,
      (a, b) => a.value === b.value,
    ),
    transform: (object) => {
      const o = object as { metadata?: { name?: string }; value?: string };
      return o.metadata?.name ? { name: o.metadata.name, value: o.value ?? "" } : undefined;
    },
    pageSize: options.pageSize ?? 500,
    watchTimeoutMs: 60_000,
    stallTimeoutMs: options.stallTimeoutMs ?? 10_000,
    backoff: { baseMs: 5, maxMs: 10, jitter: 0 },
    observer: {
      listed: () => {},
      watchEvent: () => {},
      watchRestart: (reason) => restarts.push(reason),
      listenerFailed: (key, error) => listenerFailures.push({ key, error: String(error) }),
    },
  });
  for (const listener of options.listeners ?? []) reflector.subscribe(listener);
  reflector.subscribe((change) => changes.push(change));
  const stop = new AbortController();
  const running = reflector.run(stop.signal);
  return {
    reflector,
    calls,
    restarts,
    changes,
    listenerFailures,
    lists: () => calls.filter((call) => call.query.watch === undefined),
    watches: () => calls.filter((call) => call.query.watch === true),
    async until(what: string, done: () => boolean) {
      for (let waited = 0; !done(); waited += 5) {
        if (waited > 2_000) throw new Error(`timed out waiting for ${what}`);
        await sleep(5);
      }
    },
    async stop() {
      stop.abort();
      await running;
    },
  };
}

describe("seams/Reflector: the list/watch state machine against a scripted API server", () => {
  it("lists page by page with the continue token, publishes every item, and watches from the list's version", async () => {
    const run = start(
      {
        request: (call) =>
          call.query.continue === undefined
            ? listAnswer([raw("a", "5"), raw("b", "6")], "10", "page-2")
            : listAnswer([raw("c", "7")], "10"),
      },
      { pageSize: 2 },
    );
    await run.until("the first watch", () => run.watches().length === 1);
    await run.stop();
    expect(run.lists().map((call) => [call.path, call.query.limit, call.query.continue])).to.deep.equal([
      ["/api/v1/namespaces/shop/pods", 2, undefined],
      ["/api/v1/namespaces/shop/pods", 2, "page-2"],
    ]);
    expect(run.changes.map((change) => change.key)).to.deep.equal(["a", "b", "c"]);
    expect(run.reflector.synced).to.equal(true);
    expect(run.watches()[0]?.query).to.include({ resourceVersion: "10", allowWatchBookmarks: true });
  });

  it("applies watch events, and a bookmark moves the version the next watch starts from without a change", async () => {
    let watches = 0;
    const run = start({
      request: () => listAnswer([raw("a", "5")], "10"),
      watch: () =>
        ++watches === 1
          ? {
              events: [
                event("ADDED", raw("b", "11")),
                event("MODIFIED", raw("a", "12", "v2")),
                event("DELETED", raw("b", "13")),
                event("BOOKMARK", { metadata: { resourceVersion: "20" } }),
              ],
            }
          : { events: [], hang: true },
    });
    await run.until("the second watch", () => run.watches().length === 2);
    await run.stop();
    expect(run.changes.map((c) => [c.key, c.previous?.value, c.current?.value])).to.deep.equal([
      ["a", undefined, "v1"],
      ["b", undefined, "v1"],
      ["a", "v1", "v2"],
      ["b", "v1", undefined],
    ]);
    expect(run.watches()[1]?.query.resourceVersion).to.equal("20");
    expect(run.restarts).to.deep.equal(["timeout"]);
  });

  for (const how of ["an answer of 410", "an ERROR event with code 410"] as const) {
    it(`relists on ${how}, and an item gone meanwhile is published as deleted`, async () => {
      let lists = 0;
      let watches = 0;
      const run = start({
        request: () =>
          ++lists === 1 ? listAnswer([raw("a", "5"), raw("b", "6")], "10") : listAnswer([raw("a", "5")], "30"),
        watch: () => {
          if (++watches > 1) return { events: [], hang: true };
          return how === "an answer of 410"
            ? { status: 410 }
            : { events: [event("ERROR", { kind: "Status", code: 410, reason: "Expired", message: "too old" })] };
        },
      });
      await run.until("the watch after the relist", () => run.watches().length === 2);
      await run.stop();
      expect(run.restarts).to.deep.equal(["gone"]);
      expect(run.lists()).to.have.length(2);
      expect(run.changes.at(-1)).to.deep.include({ key: "b", current: undefined });
      expect(run.watches()[1]?.query.resourceVersion).to.equal("30");
    });
  }

  it("restarts a watch that sends nothing for the stall timeout, from the same version, without a relist", async () => {
    const run = start({ request: () => listAnswer([], "10") }, { stallTimeoutMs: 30 });
    await run.until("two stalls", () => run.restarts.length >= 2);
    await run.stop();
    expect(run.restarts.every((reason) => reason === "stalled")).to.equal(true);
    expect(run.lists()).to.have.length(1);
    expect(run.watches().every((call) => call.query.resourceVersion === "10")).to.equal(true);
  });

  it("waits at least the server's Retry-After before listing again, though its own backoff is 5 ms", async () => {
    let lists = 0;
    const run = start({
      request: () => (++lists === 1 ? { status: 429, retryAfterSeconds: 0.2 } : listAnswer([], "10")),
    });
    await run.until("the second list", () => run.lists().length === 2);
    await run.stop();
    const [first, second] = run.lists() as [ScriptedCall, ScriptedCall];
    // A lower bound only: a loaded machine can make it later, never earlier (timers may round down by a millisecond).
    expect(second.atMs - first.atMs).to.be.at.least(195);
    expect(run.restarts).to.deep.equal(["error"]);
  });

  // A bug in one listener (here: the first, before the one that records) must not cost the others the change, nor be
  // counted as the API server's failure: before issue 32 the throw escaped the list (run() rejected) or ended the
  // watch as a restart "error" after its resourceVersion had moved on, and the listeners after it never saw that change.
  for (const failsOn of ["a watch event", "a listed item and a watch event"] as const) {
    it(`a listener that throws on ${failsOn} is reported with the key; the listeners after it hear every change, and the watch goes on from the event's version without a restart`, async () => {
      let watches = 0;
      const run = start(
        {
          request: () => listAnswer([raw("a", "5")], "10"),
          watch: () =>
            ++watches === 1
              ? { events: [event("MODIFIED", raw("a", "11", "v2")), event("ADDED", raw("b", "12"))] }
              : { events: [], hang: true },
        },
        {
          listeners: [
            (change) => {
              const listed = change.key === "a" && change.current?.value === "v1";
              if (change.key === "b" || (listed && failsOn !== "a watch event"))
                throw new Error(`bug on ${change.key}`);
            },
          ],
        },
      );
      await run.until("the second watch", () => run.watches().length === 2);
      await run.stop();
      expect(run.changes.map((c) => [c.key, c.current?.value])).to.deep.equal([
        ["a", "v1"],
        ["a", "v2"],
        ["b", "v1"],
      ]);
      expect(run.listenerFailures).to.deep.equal([
        ...(failsOn === "a watch event" ? [] : [{ key: "a", error: "Error: bug on a" }]),
        { key: "b", error: "Error: bug on b" },
      ]);
      // The server closed the first watch (a timeout): no error, and the next watch starts after the events.
      expect(run.restarts).to.deep.equal(["timeout"]);
      expect(run.watches()[1]?.query.resourceVersion).to.equal("12");
      expect(run.lists()).to.have.length(1);
    });
  }
});
