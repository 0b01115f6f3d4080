// InitialLister: the WatchList stream up to its initial-events-end bookmark, and the fallback to pages when the
// server cannot stream (422, or a stream that ends without the bookmark), for good. The scripted transport at the
// seam; the real API server cases are in test/integration/controller/streamed-list.test.ts.
import { expect } from "chai";
import { InitialLister, type InitialListOptions } from "../../../src/informer/initial-list.js";
import type { ApiError } from "../../../src/kube/api-error.js";
import type { KubeTransport } from "../../../src/kube/transport.js";
import { scriptedTransport } from "../../support/scripted-transport.js";

type Answer = "stream" | "422" | "500" | "no-bookmark" | "error-after-end";

const pod = (name: string) => ({ metadata: { name, resourceVersion: "5" } });
const event = (type: string, object: unknown) => ({ type, object });
const END = event("BOOKMARK", {
  metadata: { resourceVersion: "42", annotations: { "k8s.io/initial-events-end": "true" } },
});

function scripted(answer: Answer) {
  const { transport, calls } = scriptedTransport({
    // Two pages: p1 and p2, then (continue=next) p3.
    request: (call) => {
      const first = call.query.continue === undefined;
      return {
        body: {
          items: first ? [pod("p1"), pod("p2")] : [pod("p3")],
          metadata: { resourceVersion: "7", ...(first && { continue: "next" }) },
        },
      };
    },
    watch: () => {
      if (answer === "422" || answer === "500") return { status: Number(answer) };
      const events = [event("ADDED", pod("p1")), event("BOOKMARK", { metadata: { resourceVersion: "9" } })];
      events.push(event("ADDED", pod("p2")));
      if (answer !== "no-bookmark") events.push(END, event("MODIFIED", pod("p2")));
      if (answer === "error-after-end") events.push(event("ERROR", { kind: "Status", code: 410, reason: "Expired" }));
      return { events };
    },
  });
  /** The watch URLs dialled and the list pages asked for. */
  const seen = {
    get streams() {
      return calls
        .filter((call) => call.kind === "watch")
        .map((call) => `${call.path}?${new URLSearchParams(call.query as Record<string, string>)}`);
    },
    get pages() {
      return calls.filter((call) => call.kind === "request").length;
    },
  };
  return { transport, seen };
}

async function listOnce(lister: InitialLister, transport: KubeTransport, watchOn?: InitialListOptions["watchOn"]) {
  const items: string[] = [];
  const options: InitialListOptions = {
    ...(watchOn && { watchOn }),
    transport,
    collection: "pods",
    scope: {},
    pageSize: 500,
    stallTimeoutMs: 5_000,
    signal: new AbortController().signal,
    heard: () => {},
    item: (object) => items.push((object as { metadata: { name: string } }).metadata.name),
    progress: () => {},
  };
  const result = await lister.list(options);
  return { ...result, items };
}

describe("informer/InitialLister", () => {
  it("streams the initial events up to the end bookmark and watches on from its resourceVersion", async () => {
    const { transport, seen } = scripted("stream");
    const listed = await listOnce(new InitialLister(true), transport);
    expect(listed).to.deep.equal({ resourceVersion: "42", via: "watch-list", items: ["p1", "p2"] });
    expect(seen.pages).to.equal(0);
    expect(seen.streams[0]).to.include("sendInitialEvents=true").and.include("resourceVersionMatch=NotOlderThan");
  });

  it("falls back to pages on a 422, and does not try the stream again", async () => {
    const { transport, seen } = scripted("422");
    const lister = new InitialLister(true);
    expect(await listOnce(lister, transport)).to.deep.equal({
      resourceVersion: "7",
      via: "pages",
      items: ["p1", "p2", "p3"],
    });
    await listOnce(lister, transport);
    expect(seen.streams).to.have.length(1);
    expect(seen.pages).to.equal(4);
  });

  it("falls back to pages when the stream ends without the end bookmark (a server that does not stream)", async () => {
    const { transport } = scripted("no-bookmark");
    const listed = await listOnce(new InitialLister(true), transport);
    expect(listed.via).to.equal("pages");
    expect(listed.items).to.deep.equal(["p1", "p2", "p1", "p2", "p3"]);
  });

  it("a server error is no reason to give up the stream: it is thrown for the reflector's backoff", async () => {
    const { transport, seen } = scripted("500");
    const lister = new InitialLister(true);
    await listOnce(lister, transport).then(
      () => expect.fail("listed"),
      (error: ApiError) => expect(error.status).to.equal(500),
    );
    await listOnce(lister, transport).catch(() => {});
    expect(seen.streams).to.have.length(2);
    expect(seen.pages).to.equal(0);
  });

  it("lists by pages only when the stream is not wanted", async () => {
    const { transport, seen } = scripted("stream");
    expect((await listOnce(new InitialLister(false), transport)).via).to.equal("pages");
    expect(seen.streams).to.have.length(0);
  });

  it("goes on as the watch when asked: the list at the end bookmark, each later event to the watch, one request", async () => {
    const { transport, seen } = scripted("stream");
    const order: string[] = [];
    const listed = await listOnce(new InitialLister(true), transport, {
      listed: (resourceVersion) => {
        order.push(`listed at ${resourceVersion}`);
        return true;
      },
      event: (watched) => {
        const object = watched.object as { metadata: { name: string } };
        order.push(`${watched.type} ${object.metadata.name}`);
      },
    });
    expect(listed).to.deep.equal({
      resourceVersion: "42",
      via: "watch-list",
      items: ["p1", "p2"],
      watched: { stalled: false },
    });
    expect(order).to.deep.equal(["listed at 42", "MODIFIED p2"]);
    expect(seen.streams).to.have.length(1);
  });

  it("past the end bookmark an error ends the watch, not the list: returned for the reflector to judge", async () => {
    const { transport } = scripted("error-after-end");
    const listed = await listOnce(new InitialLister(true), transport, {
      listed: () => true,
      event: (watched) => {
        if (watched.type === "ERROR") throw new Error("410 from the watch");
      },
    });
    expect(listed.resourceVersion).to.equal("42");
    expect(listed.watched?.error).to.be.an("error").with.property("message", "410 from the watch");
  });

  it("a list its caller will not apply yet (listed says false) ends the stream at the bookmark", async () => {
    const { transport } = scripted("stream");
    const events: string[] = [];
    const listed = await listOnce(new InitialLister(true), transport, {
      listed: () => false,
      event: (watched) => events.push(watched.type),
    });
    expect(listed).to.deep.equal({ resourceVersion: "42", via: "watch-list", items: ["p1", "p2"] });
    expect(events).to.deep.equal([]);
  });
});
