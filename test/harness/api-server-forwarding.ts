// What the test proxies in front of the API server share: forwarding one request to it over TLS (the answer
// streamed back as it comes, watches included), listening on a free loopback port, and closing down.
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { type Agent, request as httpsRequest } from "node:https";

export type Upstream = {
  readonly target: { readonly host: string; readonly port: number };
  /** Trusts the API server's certificate; keeps connections alive. */
  readonly agent: Agent;
  /** Replaces the client's Authorization header (a proxy with credentials of its own). */
  readonly authorization?: string;
};

/** Forwards the request; `answered` gets the API server's status when its head arrives. */
export function forwardToApiServer(
  request: IncomingMessage,
  response: ServerResponse,
  upstream: Upstream,
  answered: (status: number) => void = () => {},
): void {
  const { target } = upstream;
  const forwarded = httpsRequest(
    {
      host: target.host,
      port: target.port,
      method: request.method,
      path: request.url,
      headers: {
        ...request.headers,
        host: `${target.host}:${target.port}`,
        ...(upstream.authorization !== undefined && { authorization: upstream.authorization }),
      },
      agent: upstream.agent,
    },
    (answer) => {
      answered(answer.statusCode ?? 0);
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
      answer.on("error", () => response.destroy());
    },
  );
  forwarded.on("error", () => response.destroy());
  // A client that goes away (a cancelled watch) ends the upstream request too.
  response.on("close", () => forwarded.destroy());
  request.pipe(forwarded);
}

/** Starts the server on a free loopback port and returns the port. */
export async function listenOnLoopback(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  return typeof address === "object" && address ? address.port : 0;
}

/** Drops every open connection (watches included), stops listening and ends the upstream connections. */
export async function closeProxy(server: Server, agent: Agent): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  agent.destroy();
}
