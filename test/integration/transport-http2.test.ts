// The transport's own HTTP/2 connections (src/kube/http2-connections.ts) against local TLS peers that misbehave on
// purpose: a server that goes away, one that stops answering PINGs, one that resets a stream, a slow dial, a server
// that offers only HTTP/1.1, and whether a session holds the process up. The real API server carries every other
// integration test over the same code; these are the faults it will not produce on demand. The peers use the API
// server's certificate, which the client trusts as it trusts the server.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import type { IncomingHttpHeaders } from "node:http";
import {
  constants,
  createSecureServer,
  type Http2SecureServer,
  type Http2Session,
  type ServerHttp2Stream,
} from "node:http2";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import {
  type AddressInfo,
  createServer as createNetServer,
  connect as netConnect,
  type Server,
  type Socket,
} from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { ApiError } from "../../src/kube/api-error.js";
import { KubeTransport, type WatchResponse } from "../../src/kube/transport.js";
import { controlPlane } from "../harness/shared-control-plane.js";
import { TcpProxy } from "../harness/tcp-proxy.js";
import { trustingCredentials } from "../harness/trusting-credentials.js";
import { waitFor } from "../harness/wait.js";

type StreamHandler = (stream: ServerHttp2Stream, path: string, headers: IncomingHttpHeaders) => void;

const answer = (stream: ServerHttp2Stream, body: string, status = 200) => {
  stream.respond({ ":status": status, "content-type": "application/json" });
  stream.end(body);
};

/** Reads a watch body until it ends or fails: its chunks as text, and how it finished. */
function readWatch(watch: WatchResponse): Promise<{ text: string; finished: "end" | "error" | "close" }> {
  return new Promise((resolve) => {
    let text = "";
    watch.body.on("data", (chunk) => {
      text += Buffer.from(chunk).toString("utf8");
    });
    watch.body.on("end", () => resolve({ text, finished: "end" }));
    watch.body.on("error", () => resolve({ text, finished: "error" }));
    watch.body.on("close", () => resolve({ text, finished: "close" }));
  });
}

describe("kube/transport: its HTTP/2 connections against misbehaving peers", function () {
  this.timeout(30_000);
  let cert: Buffer;
  let key: Buffer;
  const closers: (() => unknown)[] = [];

  before(() => {
    const files = controlPlane().servingCertFiles;
    cert = readFileSync(files.cert);
    key = readFileSync(files.key);
  });

  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  /** An HTTP/2 TLS server on loopback; `sessions` lists every session a client opened to it. */
  async function h2Server(
    handler: StreamHandler,
  ): Promise<{ server: Http2SecureServer; port: number; sessions: Http2Session[] }> {
    const server = createSecureServer({ cert, key });
    const sessions: Http2Session[] = [];
    server.on("session", (session) => sessions.push(session));
    server.on("stream", (stream, headers) => {
      // A stream this side resets on purpose errors here too.
      stream.on("error", () => {});
      handler(stream, String(headers[":path"]), headers);
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    closers.push(() => {
      for (const session of sessions) session.destroy();
      server.close();
    });
    return { server, port: (server.address() as AddressInfo).port, sessions };
  }

  function transportTo(port: number, connectionCheckMs?: number): KubeTransport {
    const transport = new KubeTransport(trustingCredentials(`https://127.0.0.1:${port}`, cert), {
      userAgent: "http2-test",
      ...(connectionCheckMs !== undefined && { connectionCheckMs }),
    });
    closers.push(() => transport.close());
    return transport;
  }

  it("carries requests and a watch on one HTTP/2 session", async () => {
    const protocols: (string | false | undefined)[] = [];
    const { port, sessions } = await h2Server((stream, path) => {
      protocols.push(stream.session?.alpnProtocol);
      if (path === "/watch") {
        stream.respond({ ":status": 200 });
        stream.write('{"type":"ADDED"}\n');
        setTimeout(() => stream.end('{"type":"DELETED"}\n'), 50);
      } else answer(stream, `{"path":"${path}"}`);
    });
    const transport = transportTo(port);

    const watch = await transport.stream("/watch");
    const [a, b, c, read] = await Promise.all([
      transport.request("get", "GET", "/a"),
      transport.request("create", "POST", "/b", { body: { x: 1 } }),
      transport.request("delete", "DELETE", "/c"),
      readWatch(watch),
    ]);

    expect([a.body, b.body, c.body]).to.deep.equal([{ path: "/a" }, { path: "/b" }, { path: "/c" }]);
    expect(read).to.deep.equal({ text: '{"type":"ADDED"}\n{"type":"DELETED"}\n', finished: "end" });
    expect(sessions).to.have.length(1);
    expect(protocols).to.deep.equal(["h2", "h2", "h2", "h2"]);
  });

  it("sends a request's body with its length, and an error status's Status as an ApiError", async () => {
    const seen: { length: string | undefined; body: string }[] = [];
    const { port } = await h2Server((stream, path, headers) => {
      if (path === "/missing") {
        answer(stream, '{"kind":"Status","code":404,"reason":"NotFound","message":"pods \\"p\\" not found"}', 404);
        return;
      }
      let body = "";
      stream.on("data", (chunk: Buffer) => {
        body += chunk.toString("utf8");
      });
      stream.on("end", () => {
        seen.push({ length: headers["content-length"], body });
        answer(stream, "{}");
      });
    });
    const transport = transportTo(port);

    await transport.request("create", "POST", "/events", { body: { message: "é" } });
    const error = await transport.request("get", "GET", "/missing").then(
      () => undefined,
      (rejected: unknown) => rejected,
    );

    expect(seen).to.deep.equal([{ length: "16", body: '{"message":"é"}' }]);
    expect(error).to.be.instanceOf(ApiError);
    expect((error as ApiError).status).to.equal(404);
  });

  it("finishes a watch on a session that went away, and sends new requests on a new session", async () => {
    let watchStream: ServerHttp2Stream | undefined;
    const { port, sessions } = await h2Server((stream, path) => {
      if (path === "/watch") {
        watchStream = stream;
        stream.respond({ ":status": 200 });
        stream.write("before\n");
      } else answer(stream, "{}");
    });
    const transport = transportTo(port);
    const watch = await transport.stream("/watch");
    const read = readWatch(watch);
    await waitFor("the watch to open", async () => watchStream !== undefined);

    // GOAWAY naming the watch's stream as the last one the server will process.
    sessions[0]?.goaway(constants.NGHTTP2_NO_ERROR, watchStream?.id ?? 0);
    await sleep(100);
    await transport.request("get", "GET", "/after");
    watchStream?.end("after\n");

    expect(await read).to.deep.equal({ text: "before\nafter\n", finished: "end" });
    expect(sessions).to.have.length(2);
  });

  it("drops a session whose PING goes unanswered, failing its watch, and dials afresh", async () => {
    const { port: serverPort, sessions } = await h2Server((stream, path) => {
      if (path === "/watch") {
        stream.respond({ ":status": 200 });
        stream.write("open\n");
      } else answer(stream, "{}");
    });
    const proxy = await TcpProxy.start({ host: "127.0.0.1", port: serverPort });
    closers.push(() => proxy.close());
    const transport = transportTo(proxy.port, 1_000);
    const watch = await transport.stream("/watch");
    const read = readWatch(watch);
    await sleep(100);

    // The PING sent at the next tick (≤ 1 s) is still unanswered at the one after; no stall watchdog here.
    proxy.stallAll();
    const finished = await read;

    expect(finished.finished).to.equal("error");
    const next = await transport.request("get", "GET", "/after");
    expect(next.status).to.equal(200);
    expect(sessions).to.have.length(2);
  });

  it("fails a request whose stream the server resets, and serves the next on the same session", async () => {
    const { port, sessions } = await h2Server((stream, path) => {
      if (path === "/reset") stream.close(constants.NGHTTP2_INTERNAL_ERROR);
      else answer(stream, "{}");
    });
    const transport = transportTo(port);

    const error = await transport.request("get", "GET", "/reset").then(
      () => undefined,
      (rejected: unknown) => rejected,
    );
    const next = await transport.request("get", "GET", "/next");

    expect(error).to.be.instanceOf(ApiError);
    expect((error as ApiError).status).to.equal(0);
    expect(next.status).to.equal(200);
    expect(sessions).to.have.length(1);
  });

  it("fails a watch and a request whose streams end with no answer: reset with NO_ERROR or CANCEL, or their connection closed cleanly", async () => {
    // node:http2 ends such a stream with neither an answer nor an error; a watch waiting for its head once waited
    // there for ever, deaf to its stall watchdog and to shutdown.
    const { port } = await h2Server((stream, path) => {
      if (path.startsWith("/no-error")) stream.close(constants.NGHTTP2_NO_ERROR);
      else if (path.startsWith("/cancel")) stream.close(constants.NGHTTP2_CANCEL);
      else if (path.startsWith("/hang-up")) stream.session?.destroy();
      else answer(stream, "{}");
    });
    const transport = transportTo(port);
    const outcomes: Record<string, string> = {};
    const outcomeOf = (attempt: Promise<unknown>) =>
      attempt.then(
        () => "answered",
        (error: unknown) => (error instanceof ApiError ? `ApiError ${error.status}` : String(error)),
      );

    for (const path of ["/no-error", "/cancel", "/hang-up"]) {
      outcomes[`watch ${path}`] = await outcomeOf(transport.stream(`${path}/watch`));
      outcomes[`get ${path}`] = await outcomeOf(transport.request("get", "GET", `${path}/get`));
    }
    const next = await transport.request("get", "GET", "/next");

    expect(outcomes).to.deep.equal({
      "watch /no-error": "ApiError 0",
      "get /no-error": "ApiError 0",
      "watch /cancel": "ApiError 0",
      "get /cancel": "ApiError 0",
      "watch /hang-up": "ApiError 0",
      "get /hang-up": "ApiError 0",
    });
    expect(next.status).to.equal(200);
  });

  it("fails a request and a watch whose connection closes mid-body: a cut-off answer is not taken for a whole one", async () => {
    const { port } = await h2Server((stream) => {
      stream.respond({ ":status": 200, "content-type": "application/json" });
      stream.write('{"type":"ADDED"}\n{"kind":"List","items":[');
      setTimeout(() => stream.session?.destroy(), 50);
    });
    const transport = transportTo(port);

    const request = await transport.request("list", "GET", "/list").then(
      () => "answered",
      (error: unknown) => (error instanceof ApiError ? `ApiError ${error.status}: ${error.message}` : String(error)),
    );
    const watch = await readWatch(await transport.stream("/watch"));

    expect(request).to.match(/^ApiError 0: .*closed before the answer's end/);
    expect(watch.finished).to.equal("error");
  });

  it("sends a request again, body and all, when the server refuses its stream unprocessed (REFUSED_STREAM)", async () => {
    let refusals = 2;
    const bodies: string[] = [];
    const { port, sessions } = await h2Server((stream) => {
      if (refusals > 0) {
        refusals--;
        stream.close(constants.NGHTTP2_REFUSED_STREAM);
        return;
      }
      let body = "";
      stream.on("data", (chunk: Buffer) => {
        body += chunk.toString("utf8");
      });
      stream.on("end", () => {
        bodies.push(body);
        answer(stream, '{"created":true}', 201);
      });
    });
    const transport = transportTo(port);

    const created = await transport.request("create", "POST", "/selfsubjectreviews", { body: { kind: "x" } });

    expect(created).to.deep.equal({ status: 201, body: { created: true } });
    expect(bodies).to.deep.equal(['{"kind":"x"}']);
    expect(sessions).to.have.length(1);
  });

  it("gives a refused request up after three resends, with the refusal in its error", async () => {
    let streams = 0;
    const { port } = await h2Server((stream) => {
      streams++;
      stream.close(constants.NGHTTP2_REFUSED_STREAM);
    });
    const transport = transportTo(port);

    const error = await transport.request("delete", "DELETE", "/p").then(
      () => undefined,
      (rejected: unknown) => rejected,
    );

    expect(error).to.be.instanceOf(ApiError);
    expect((error as ApiError).status).to.equal(0);
    expect((error as ApiError).message).to.include("REFUSED_STREAM");
    expect(streams).to.equal(4);
  });

  it("sends a request a GOAWAY left unprocessed again, on a new session", async () => {
    const { server, port, sessions } = await h2Server((stream, path) => answer(stream, `{"path":"${path}"}`));
    // The first session goes away as it opens, naming no stream as processed: the request sent on it included.
    server.on("session", (session: Http2Session) => {
      if (sessions.length === 1) session.goaway(constants.NGHTTP2_NO_ERROR, 0);
    });
    const transport = transportTo(port);

    const answered = await transport.request("get", "GET", "/after-goaway");

    expect(answered.body).to.deep.equal({ path: "/after-goaway" });
    expect(sessions).to.have.length(2);
  });

  it("cancels a watch on the wire when its reader destroys it", async () => {
    let closedWith: number | undefined;
    const { port } = await h2Server((stream) => {
      stream.on("close", () => {
        closedWith = stream.rstCode;
      });
      stream.respond({ ":status": 200 });
      stream.write("open\n");
    });
    const transport = transportTo(port);
    const watch = await transport.stream("/watch");
    await new Promise((resolve) => watch.body.on("data", resolve));

    watch.body.destroy();

    await waitFor("the server's stream to close", async () => closedWith !== undefined);
    expect(closedWith).to.equal(constants.NGHTTP2_CANCEL);
  });

  it("never sends a request given up while its connection was still being dialled", async () => {
    const seen: string[] = [];
    const { port: serverPort } = await h2Server((stream, path) => {
      seen.push(path);
      answer(stream, "{}");
    });
    // A dial that takes 500 ms: the TCP connection is passed on to the server only then.
    const slow: Server = createNetServer((client) => {
      setTimeout(() => {
        const upstream = netConnect(serverPort, "127.0.0.1");
        client.pipe(upstream).pipe(client);
        client.on("close", () => upstream.destroy());
      }, 500);
    });
    slow.listen(0, "127.0.0.1");
    await once(slow, "listening");
    closers.push(() => slow.close());
    const transport = transportTo((slow.address() as AddressInfo).port);

    const late = transport.request("delete", "DELETE", "/late", { timeoutMs: 100 });
    const error = await late.then(
      () => undefined,
      (rejected: unknown) => rejected,
    );
    await transport.request("get", "GET", "/later");

    expect((error as { cause?: { name?: string } }).cause?.name).to.equal("TimeoutError");
    expect(seen).to.deep.equal(["/later"]);
  });

  it("gives up a dial whose TLS handshake never finishes, failing what waited on it, and dials afresh", async () => {
    const { port: serverPort, sessions } = await h2Server((stream) => answer(stream, "{}"));
    // The first connection is accepted and then never answered (TCP keep-alive probes still are); later ones pass.
    const held: Socket[] = [];
    const hanging: Server = createNetServer((client) => {
      if (held.length === 0) {
        held.push(client);
        return;
      }
      const upstream = netConnect(serverPort, "127.0.0.1");
      client.pipe(upstream).pipe(client);
      client.on("close", () => upstream.destroy());
    });
    hanging.listen(0, "127.0.0.1");
    await once(hanging, "listening");
    closers.push(() => {
      for (const client of held) client.destroy();
      hanging.close();
    });
    // Checks every 1 s: a dial gets 2 s, as long as a session may leave a PING unanswered.
    const transport = transportTo((hanging.address() as AddressInfo).port, 1_000);

    const [first, second] = await Promise.allSettled([
      transport.request("get", "GET", "/first"),
      transport.request("get", "GET", "/second"),
    ]);
    const next = await transport.request("get", "GET", "/next");

    for (const waited of [first, second]) {
      expect(waited.status).to.equal("rejected");
      expect(String((waited as PromiseRejectedResult).reason)).to.include("no TLS handshake within 2000 ms");
    }
    expect(next.status).to.equal(200);
    expect(held).to.have.length(1);
    expect(sessions).to.have.length(1);
  });

  it("speaks HTTP/1.1 to a server that does not offer HTTP/2, for requests and watches", async () => {
    const versions: string[] = [];
    const server: HttpsServer = createHttpsServer({ cert, key }, (request, response) => {
      versions.push(request.httpVersion);
      response.writeHead(200, { "content-type": "application/json" });
      if (request.url === "/watch") {
        response.write("one\n");
        setTimeout(() => response.end("two\n"), 20);
      } else response.end("{}");
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    closers.push(() => {
      server.closeAllConnections();
      server.close();
    });
    const transport = transportTo((server.address() as AddressInfo).port);

    const got = await transport.request("get", "GET", "/version");
    const read = await readWatch(await transport.stream("/watch"));

    expect(got.body).to.deep.equal({});
    expect(read).to.deep.equal({ text: "one\ntwo\n", finished: "end" });
    expect(versions).to.deep.equal(["1.1", "1.1"]);
  });

  /** Runs `body` in a child process after making `transport` to the port; its exit code and what it printed. */
  async function inChild(port: number, body: string): Promise<{ code: number | string; output: string }> {
    const transportModule = fileURLToPath(new URL("../../src/kube/transport.js", import.meta.url));
    const script = `
      const { KubeTransport } = await import(${JSON.stringify(transportModule)});
      const ca = ${JSON.stringify(cert.toString("utf8"))};
      const transport = new KubeTransport({
        server: "https://127.0.0.1:${port}", namespace: undefined,
        authenticate: async () => ({ headers: {}, tls: { ca } }), describe: () => ({ user: "none", ca: "test" }),
      }, { userAgent: "http2-test" });
      ${body}
    `;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
    });
    const [code] = (await Promise.race([once(child, "exit"), sleep(10_000).then(() => ["still running"])])) as [
      number | string,
    ];
    if (code === "still running") child.kill();
    return { code, output: output.trim() };
  }

  it("an idle session does not hold the process up, and a request in flight does", async () => {
    const { port } = await h2Server((stream, path) => {
      if (path === "/slow") setTimeout(() => answer(stream, '{"slow":true}'), 700);
      else answer(stream, "{}");
    });

    const run = await inChild(
      port,
      `await transport.request("get", "GET", "/first");
       transport.request("get", "GET", "/slow").then((answer) => console.log(JSON.stringify(answer.body)));`,
    );

    // It waited for /slow's answer, then exited on its own with the session still open.
    expect(run).to.deep.equal({ code: 0, output: '{"slow":true}' });
  });

  it("close() holds the process up until the session has closed (a top-level await of it settles)", async () => {
    const { port } = await h2Server((stream, path) => {
      if (path === "/watch") {
        stream.respond({ ":status": 200 });
        stream.write("open\n");
      } else answer(stream, "{}");
    });

    // As the controller stops: its watches destroyed, then the transport closed.
    const run = await inChild(
      port,
      `const watch = await transport.stream("/watch");
       await new Promise((resolve) => watch.body.on("data", resolve));
       watch.body.destroy();
       await transport.close();
       console.log("closed");`,
    );

    // Exit code 13 is Node's for a top-level await that never settled.
    expect(run).to.deep.equal({ code: 0, output: "closed" });
  });
});
