// Connections through undici's Agent: plain HTTP (kubectl proxy) and HTTPS servers that speak only HTTP/1.1. Loaded
// only when one is needed: against a kube-apiserver the transport speaks node:http2 (http2-connections.ts), and
// undici's modules would cost every per-node start their load.
//
// The Agent comes from its own module. The package's index also loads its mock agents, caches, WebSocket,
// EventSource, cookies and proxy agents: ~2 MB of RSS for nothing. The package has no export map, so this path is
// public; a unit test checks it is the package's own.
import { createRequire } from "node:module";
import type * as Undici from "undici";
import type { TlsOptions } from "./cluster-credentials.js";
import type { Connections, DispatchHandler, DispatchRequest } from "./dispatch.js";

export type Agent = Undici.Agent;

const require = createRequire(import.meta.url);

/** undici's Agent class, loaded at the first call. */
export function undiciAgent(): typeof Undici.Agent {
  return require("undici/lib/dispatcher/agent.js");
}

/**
 * One undici Agent with the server's TLS settings, TCP keep-alive, and no timeouts of its own (the callers have
 * theirs); `connectionsPerOrigin` caps its connections to the server (undici's default: no cap).
 */
export function undiciConnections(tls: TlsOptions, connectionsPerOrigin?: number): Connections {
  const Agent = undiciAgent();
  const agent = new Agent({
    ...(connectionsPerOrigin !== undefined && { connections: connectionsPerOrigin }),
    connect: {
      ...(tls.ca !== undefined && { ca: tls.ca }),
      ...(tls.cert !== undefined && { cert: tls.cert }),
      ...(tls.key !== undefined && { key: tls.key }),
      ...(tls.rejectUnauthorized !== undefined && { rejectUnauthorized: tls.rejectUnauthorized }),
      ...(tls.servername !== undefined && { servername: tls.servername }),
      keepAlive: true,
      keepAliveInitialDelay: 30_000,
    },
  });
  return {
    dispatch(request: DispatchRequest, handler: DispatchHandler): void {
      agent.dispatch(
        {
          origin: request.origin,
          path: request.path,
          method: request.method as Undici.Dispatcher.HttpMethod,
          headers: request.headers ?? {},
          body: request.body ?? null,
          // A whole request has its own deadline (whole-response.ts); a watch has its stall watchdog.
          headersTimeout: 0,
          bodyTimeout: 0,
        },
        handler as Undici.Dispatcher.DispatchHandler,
      );
    },
    close: () => agent.close(),
  };
}
