// dispatchWhole: the status, headers and every body byte in one answer, whatever the status; the deadline and the
// caller's signal abort the request on the wire and reject, and a request given up before it started is never
// sent. Against a real local HTTP server.
import { once } from "node:events";
import { expect } from "chai";
import { undiciConnections } from "../../../src/kube/undici-connections.js";
import { dispatchWhole } from "../../../src/kube/whole-response.js";
import { localServers } from "../../support/local-http-server.js";

const NO_DEADLINE = { timeoutMs: 10_000 };

describe("kube/whole-response", () => {
  const local = localServers();

  it("gathers a body sent in several chunks, with its status and headers", async () => {
    const { origin } = await local.serve((response) => {
      response.writeHead(201, { "content-type": "application/json" });
      response.write('{"metadata":');
      setTimeout(() => response.end('{"name":"e1"}}'), 20);
    });
    const answer = await dispatchWhole(
      local.connections,
      { origin, path: "/e", method: "POST", body: "{}" },
      NO_DEADLINE,
    );
    expect(answer.statusCode).to.equal(201);
    expect(answer.headers["content-type"]).to.equal("application/json");
    expect(JSON.parse(answer.bytes.toString("utf8"))).to.deep.equal({ metadata: { name: "e1" } });
  });

  it("sends the method, path and body as given", async () => {
    let seen: { method?: string; path: string; body: string } | undefined;
    const { origin } = await local.serve((response, path, request) => {
      let body = "";
      request.on("data", (chunk: Buffer) => {
        body += chunk.toString("utf8");
      });
      request.on("end", () => {
        seen = { ...(request.method !== undefined && { method: request.method }), path, body };
        response.end();
      });
    });
    await dispatchWhole(
      local.connections,
      { origin, path: "/p?dryRun=All", method: "DELETE", body: '{"a":1}' },
      NO_DEADLINE,
    );
    expect(seen).to.deep.equal({ method: "DELETE", path: "/p?dryRun=All", body: '{"a":1}' });
  });

  it("resolves an error status with its body (the caller judges it), and an empty body as no bytes", async () => {
    const { origin } = await local.serve((response, path) => {
      response.writeHead(path === "/gone" ? 404 : 200);
      response.end(path === "/gone" ? '{"kind":"Status","code":404}' : "");
    });
    const gone = await dispatchWhole(local.connections, { origin, path: "/gone", method: "GET" }, NO_DEADLINE);
    expect(gone.statusCode).to.equal(404);
    expect(gone.bytes.toString("utf8")).to.equal('{"kind":"Status","code":404}');
    const empty = await dispatchWhole(local.connections, { origin, path: "/", method: "GET" }, NO_DEADLINE);
    expect([empty.statusCode, empty.bytes.length]).to.deep.equal([200, 0]);
  });

  it("rejects with a TimeoutError when the deadline passes mid-body, and closes the request", async () => {
    let closed: Promise<unknown> | undefined;
    const { origin } = await local.serve((response, _path, request) => {
      closed = once(request.socket, "close");
      response.writeHead(200);
      response.write("the first half");
    });
    const error = await dispatchWhole(
      local.connections,
      { origin, path: "/slow", method: "GET" },
      { timeoutMs: 100 },
    ).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).to.be.instanceOf(DOMException);
    expect((error as DOMException).name).to.equal("TimeoutError");
    expect((error as DOMException).message).to.equal("The operation was aborted due to timeout");
    await closed;
  });

  it("rejects with the caller's reason when its signal aborts before the head", async () => {
    let arrived!: () => void;
    const requested = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const { origin } = await local.serve(() => arrived());
    const cancel = new AbortController();
    const answer = dispatchWhole(
      local.connections,
      { origin, path: "/hang", method: "GET" },
      { ...NO_DEADLINE, signal: cancel.signal },
    );
    await requested;
    const reason = new Error("shutting down");
    cancel.abort(reason);
    const error = await answer.then(
      () => undefined,
      (rejected: unknown) => rejected,
    );
    expect(error).to.equal(reason);
  });

  it("does not send a request whose signal has already aborted", async () => {
    let requests = 0;
    const { origin } = await local.serve((response) => {
      requests++;
      response.end();
    });
    const reason = new Error("already cancelled");
    const error = await dispatchWhole(
      local.connections,
      { origin, path: "/", method: "GET" },
      {
        ...NO_DEADLINE,
        signal: AbortSignal.abort(reason),
      },
    ).then(
      () => undefined,
      (rejected: unknown) => rejected,
    );
    expect(error).to.equal(reason);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(requests).to.equal(0);
  });

  it("never sends a request whose deadline passed while it waited for a connection", async () => {
    const seen: string[] = [];
    const { origin } = await local.serve((response, path) => {
      seen.push(path);
      setTimeout(() => response.end("ok"), path === "/busy" ? 300 : 0);
    });
    const oneConnection = undiciConnections({}, 1);
    try {
      const busy = dispatchWhole(oneConnection, { origin, path: "/busy", method: "GET" }, NO_DEADLINE);
      const queued = dispatchWhole(oneConnection, { origin, path: "/queued", method: "DELETE" }, { timeoutMs: 100 });
      const error = await queued.then(
        () => undefined,
        (rejected: unknown) => rejected,
      );
      expect((error as DOMException).name).to.equal("TimeoutError");
      await busy;
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(seen).to.deep.equal(["/busy"]);
    } finally {
      await oneConnection.close();
    }
  });

  it("rejects when the connection is refused", async () => {
    const { server, origin } = await local.serve(() => {});
    server.close();
    server.closeAllConnections();
    await once(server, "close");
    const error = await dispatchWhole(local.connections, { origin, path: "/", method: "GET" }, NO_DEADLINE).then(
      () => undefined,
      (rejected: unknown) => rejected,
    );
    expect(error).to.be.instanceOf(Error);
    expect(String((error as Error & { code?: string }).code)).to.equal("ECONNREFUSED");
  });

  it("leaves no timer behind once answered", async () => {
    const { origin } = await local.serve((response) => response.end("ok"));
    const before = process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length;
    await dispatchWhole(local.connections, { origin, path: "/", method: "GET" }, { timeoutMs: 60_000 });
    const after = process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length;
    expect(after).to.equal(before);
  });
});
