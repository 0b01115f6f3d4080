// startHttpServer: /metrics, /healthz, /readyz, 404/405, and a close() that leaves nothing running.

import { Agent, request } from "node:http";
import { expect } from "chai";
import { Registry } from "prom-client";
import { type HealthReport, reportText, startHttpServer } from "../../../src/observe/http-server.js";
import { createMetrics } from "../../../src/observe/metrics.js";
import { silentLogger } from "../../support/loggers.js";

type Reply = { status: number; headers: Record<string, string | string[] | undefined>; body: string };

function call(url: string, opts: { method?: string; accept?: string; agent?: Agent } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: opts.method ?? "GET",
        headers: opts.accept === undefined ? {} : { accept: opts.accept },
        agent: opts.agent ?? false,
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

const quietLogger = silentLogger;

describe("observe/http-server", () => {
  let health: HealthReport;
  let ready: HealthReport;
  let readyError: Error | undefined;
  let server: Awaited<ReturnType<typeof startHttpServer>>;

  beforeEach(async () => {
    health = { ok: true, checks: { "event-loop": { ok: true } } };
    ready = { ok: true, checks: { "informer-synced": { ok: true } } };
    readyError = undefined;
    const registry = new Registry();
    createMetrics(registry, { ruleNames: ["istio"], version: "test" });
    server = await startHttpServer({
      host: "127.0.0.1",
      port: 0,
      registry,
      health: () => health,
      ready: () => {
        if (readyError) throw readyError;
        return ready;
      },
      logger: quietLogger(),
    });
  });

  afterEach(async () => {
    await server.close();
  });

  it("reports the port it actually bound", () => {
    expect(server.port).to.be.above(0);
    expect(server.url).to.equal(`http://127.0.0.1:${server.port}`);
  });

  it("serves /metrics in the registry's format", async () => {
    const reply = await call(`${server.url}/metrics`);
    expect(reply.status).to.equal(200);
    expect(reply.headers["content-type"]).to.match(/^text\/plain; version=0\.0\.4/);
    expect(reply.body).to.include('cni_repair_broken_pods{rule="istio"} 0\n');
  });

  it("answers /healthz with 200 and a check list when healthy", async () => {
    const reply = await call(`${server.url}/healthz`);
    expect(reply.status).to.equal(200);
    expect(reply.body).to.equal("[+] event-loop ok\nhealthz check passed\n");
  });

  it("answers /healthz with 503 and the failing check's detail when unhealthy", async () => {
    health = {
      ok: false,
      checks: { "event-loop": { ok: false, detail: "lag 9000ms" }, watch: { ok: true }, cache: { ok: false } },
    };
    const reply = await call(`${server.url}/healthz?verbose`);
    expect(reply.status).to.equal(503);
    expect(reply.body).to.equal(
      "[-] event-loop failed: lag 9000ms\n[+] watch ok\n[-] cache failed\nhealthz check failed\n",
    );
  });

  it("answers /readyz, as JSON when asked", async () => {
    ready = { ok: false, checks: { "informer-synced": { ok: false, detail: "initial list pending" } } };
    const text = await call(`${server.url}/readyz`);
    expect(text.status).to.equal(503);
    expect(text.body).to.equal(reportText("readyz", ready));

    const json = await call(`${server.url}/readyz`, { accept: "application/json" });
    expect(json.status).to.equal(503);
    expect(json.headers["content-type"]).to.match(/^application\/json/);
    expect(JSON.parse(json.body)).to.deep.equal(ready);
  });

  it("treats a throwing health function as failing", async () => {
    readyError = new Error("cache not built");
    const reply = await call(`${server.url}/readyz`);
    expect(reply.status).to.equal(503);
    expect(reply.body).to.equal("[-] readyz failed: cache not built\nreadyz check failed\n");
  });

  it("answers HEAD with headers only", async () => {
    const reply = await call(`${server.url}/healthz`, { method: "HEAD" });
    expect(reply.status).to.equal(200);
    expect(reply.body).to.equal("");
  });

  it("answers 404 for unknown paths and 405 for other methods", async () => {
    expect((await call(`${server.url}/nope`)).status).to.equal(404);
    const post = await call(`${server.url}/metrics`, { method: "POST" });
    expect(post.status).to.equal(405);
    expect(post.headers.allow).to.equal("GET, HEAD");
    expect((await call(`${server.url}/healthz`, { method: "DELETE" })).status).to.equal(405);
  });

  it("listens on every address, IPv6 and IPv4, with no host (the default), so probes reach it on either stack", async () => {
    const everywhere = await startHttpServer({
      host: "",
      port: 0,
      registry: new Registry(),
      health: () => health,
      ready: () => ready,
      logger: quietLogger(),
    });
    try {
      // Node falls back to 0.0.0.0 where the machine has no IPv6; this machine's loopback has ::1.
      expect(everywhere.url).to.equal(`http://[::]:${everywhere.port}`);
      expect((await call(`http://127.0.0.1:${everywhere.port}/healthz`)).status).to.equal(200);
      expect((await call(`http://[::1]:${everywhere.port}/healthz`)).status).to.equal(200);
    } finally {
      await everywhere.close();
    }
  });

  it("rejects when the port is taken", async () => {
    let failure: unknown;
    await startHttpServer({
      host: "127.0.0.1",
      port: server.port,
      registry: new Registry(),
      health: () => health,
      ready: () => ready,
      logger: quietLogger(),
    }).then(
      (extra) => extra.close(),
      (err: unknown) => {
        failure = err;
      },
    );
    expect(failure).to.have.property("code", "EADDRINUSE");
  });

  it("closes promptly with an idle keep-alive connection open, and close() can be called twice", async () => {
    const agent = new Agent({ keepAlive: true });
    try {
      expect((await call(`${server.url}/healthz`, { agent })).status).to.equal(200);
      const started = Date.now();
      await server.close();
      await server.close();
      expect(Date.now() - started).to.be.below(1000);
      let refused = false;
      await call(`${server.url}/healthz`).catch(() => {
        refused = true;
      });
      expect(refused).to.equal(true);
    } finally {
      agent.destroy();
    }
  });
});
