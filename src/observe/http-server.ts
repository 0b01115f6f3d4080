// Serves /metrics, /healthz and /readyz over plain node:http.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";
import type { Logger } from "./logger.js";

export type HealthCheck = { ok: boolean; detail?: string };
export type HealthReport = { ok: boolean; checks: Record<string, HealthCheck> };

export type HttpServerOptions = {
  /** "": every address (IPv6 and IPv4). */
  readonly host: string;
  /** 0 picks a free port; the result reports the real one. */
  readonly port: number;
  readonly registry: Registry;
  readonly health: () => HealthReport;
  readonly ready: () => HealthReport;
  readonly logger: Logger;
};

export type RunningHttpServer = {
  readonly url: string;
  readonly port: number;
  /** Stops accepting, drops idle keep-alive connections, and resolves once every connection is gone. */
  close(): Promise<void>;
};

// Not `import … from "node:http"`: an ES import of the module reads every export, and its lazy WebSocket,
// MessageEvent and CloseEvent getters load Node's bundled undici (~3 MB RSS) that nothing here uses.
const { createServer } = process.getBuiltinModule("node:http");

/** How long close() lets an in-flight request finish before cutting its connection. */
const CLOSE_GRACE_MS = 2000;

export async function startHttpServer(opts: HttpServerOptions): Promise<RunningHttpServer> {
  const { logger } = opts;
  const server = createServer((req, res) => {
    handle(opts, req, res).catch((err: unknown) => {
      logger.error("http handler failed", { path: req.url, err });
      if (!res.headersSent) send(res, req, 500, "text/plain; charset=utf-8", "internal error\n");
      else res.destroy();
    });
  });
  // A probe or scrape that stalls must not pin a connection (and the process) for the 5-minute default.
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    // No host: Node binds `::` (IPv4 too, dual-stack) and falls back to 0.0.0.0 where the node has no IPv6. Any host,
    // even an IP literal, goes through a DNS lookup first (~10 ms of a start's CPU).
    server.listen(opts.host === "" ? { port: opts.port } : { host: opts.host, port: opts.port }, () => {
      server.off("error", reject);
      resolve();
    });
  });
  server.on("error", (err) => logger.error("http server error", { err }));

  const { address, port } = server.address() as AddressInfo;
  const host = opts.host === "" ? address : opts.host;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  logger.info("http server listening", { url });

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve, reject) => {
      const force = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
      force.unref();
      server.close((err) => {
        clearTimeout(force);
        if (err) reject(err);
        else resolve();
      });
      // Keep-alive sockets would otherwise hold close() open until they time out.
      server.closeIdleConnections();
    });
    return closing;
  };

  return { url, port, close };
}

async function handle(opts: HttpServerOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? "/", "http://localhost").pathname;
  const route = ROUTES[path];
  if (route === undefined) {
    send(res, req, 404, "text/plain; charset=utf-8", "not found\n");
    return;
  }
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.setHeader("Allow", "GET, HEAD");
    send(res, req, 405, "text/plain; charset=utf-8", "method not allowed\n");
    return;
  }
  await route(opts, req, res);
}

type Route = (opts: HttpServerOptions, req: IncomingMessage, res: ServerResponse) => Promise<void> | void;

const ROUTES: Record<string, Route | undefined> = {
  "/metrics": async ({ registry }, req, res) => {
    send(res, req, 200, registry.contentType, await registry.metrics());
  },
  "/healthz": ({ health }, req, res) => sendReport(req, res, "healthz", health),
  "/readyz": ({ ready }, req, res) => sendReport(req, res, "readyz", ready),
};

function sendReport(req: IncomingMessage, res: ServerResponse, name: string, probe: () => HealthReport): void {
  let report: HealthReport;
  try {
    report = probe();
  } catch (err) {
    // A check that throws is a failing check, not a crashed endpoint.
    report = { ok: false, checks: { [name]: { ok: false, detail: err instanceof Error ? err.message : String(err) } } };
  }
  const status = report.ok ? 200 : 503;
  if (wantsJson(req)) {
    send(res, req, status, "application/json; charset=utf-8", `${JSON.stringify(report)}\n`);
  } else {
    send(res, req, status, "text/plain; charset=utf-8", reportText(name, report));
  }
}

/** Like kube-apiserver's `?verbose`: one line per check, then the verdict. */
export function reportText(name: string, report: HealthReport): string {
  const lines = Object.entries(report.checks).map(([check, { ok, detail }]) => {
    if (ok) return `[+] ${check} ok`;
    return detail === undefined ? `[-] ${check} failed` : `[-] ${check} failed: ${detail}`;
  });
  lines.push(`${name} check ${report.ok ? "passed" : "failed"}`);
  return `${lines.join("\n")}\n`;
}

function wantsJson(req: IncomingMessage): boolean {
  return (req.headers.accept ?? "").includes("application/json");
}

function send(res: ServerResponse, req: IncomingMessage, status: number, contentType: string, body: string): void {
  res.statusCode = status;
  res.setHeader("Content-Type", contentType);
  res.setHeader("Content-Length", Buffer.byteLength(body));
  res.setHeader("Cache-Control", "no-store");
  res.end(req.method === "HEAD" ? undefined : body);
}
