// dispatchStreaming: the head resolves, the body's chunks come by callbacks in order (also those that came before
// anyone listened), errors and aborts end the body, destroy stops the request. Against a real local HTTP server.
import { expect } from "chai";
import { readWatchEvents } from "../../../src/informer/watch-lines.js";
import type { Connections } from "../../../src/kube/dispatch.js";
import { DispatchedBody, dispatchStreaming } from "../../../src/kube/streamed-response.js";
import { localServers } from "../../support/local-http-server.js";

describe("kube/streamed-response", () => {
  const local = localServers();

  it("hands on every line of the body in order, the first sent with the head", async () => {
    const { origin } = await local.serve((response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.write('{"type":"ADDED","object":{"n":1}}\n{"type":"MODIFIED",');
      setTimeout(() => response.end('"object":{"n":2}}\n'), 20);
    });
    const answer = await dispatchStreaming(local.connections, { origin, path: "/w", method: "GET" }, undefined);
    expect(answer.statusCode).to.equal(200);
    // Give the first bytes time to arrive before anyone listens.
    await new Promise((resolve) => setTimeout(resolve, 10));
    const events: unknown[] = [];
    await readWatchEvents(
      answer.body,
      () => {},
      (event) => events.push(event),
    );
    expect(events).to.deep.equal([
      { type: "ADDED", object: { n: 1 } },
      { type: "MODIFIED", object: { n: 2 } },
    ]);
  });

  it("reads an error answer's body as text", async () => {
    const { origin } = await local.serve((response) => {
      response.writeHead(410, { "content-type": "application/json" });
      response.end('{"kind":"Status","code":410}');
    });
    const answer = await dispatchStreaming(local.connections, { origin, path: "/w", method: "GET" }, undefined);
    expect(answer.statusCode).to.equal(410);
    expect(await answer.body.text()).to.equal('{"kind":"Status","code":410}');
  });

  it("rejects when the signal aborts before the head, and fails the body when it aborts after", async () => {
    const { origin } = await local.serve((response, path) => {
      if (path === "/slow") return; // never answers
      response.writeHead(200);
      response.write('{"type":"ADDED","object":{}}\n');
    });
    const before = new AbortController();
    const pending = dispatchStreaming(local.connections, { origin, path: "/slow", method: "GET" }, before.signal);
    setTimeout(() => before.abort(new Error("gave up waiting")), 20);
    const early = await pending.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(String(early)).to.include("gave up waiting");

    const after = new AbortController();
    const answer = await dispatchStreaming(local.connections, { origin, path: "/open", method: "GET" }, after.signal);
    const reading = readWatchEvents(
      answer.body,
      () => {},
      () => after.abort(new Error("stalled")),
    );
    const late = await reading.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(String(late)).to.include("stalled");
    expect(answer.body.destroyed).to.equal(true);
  });

  it("destroy stops the request and closes the body once", async () => {
    let closedOnServer = false;
    const { origin } = await local.serve((response) => {
      response.writeHead(200);
      response.write("{}\n");
      response.on("close", () => {
        closedOnServer = true;
      });
    });
    const answer = await dispatchStreaming(local.connections, { origin, path: "/w", method: "GET" }, undefined);
    let closes = 0;
    answer.body.on("close", () => closes++);
    answer.body.destroy();
    answer.body.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closes).to.equal(1);
    expect(closedOnServer, "the connection's request was aborted").to.equal(true);
  });

  it("rejects an answer that ends before its head, and no later abort is needed to settle it", async () => {
    // Connections that break the contract (an end with no head): the caller must not wait for ever.
    const headless: Connections = {
      dispatch: (_request, handler) => {
        const controller = { abort: () => {} };
        handler.onRequestStart?.(controller, {});
        setTimeout(() => handler.onResponseEnd?.(controller, {}), 5);
      },
      close: async () => {},
    };
    const outcome = await dispatchStreaming(
      headless,
      { origin: "https://api", path: "/w", method: "GET" },
      new AbortController().signal,
    ).then(
      () => "resolved",
      (error: unknown) => String(error),
    );
    expect(outcome).to.include("ended before its head");
  });

  it("delivers an end that came before anyone listened", async () => {
    const body = new DispatchedBody();
    body.push(Buffer.from("a"));
    body.end();
    expect(await body.text()).to.equal("a");
    expect(body.destroyed).to.equal(true);
  });
});
