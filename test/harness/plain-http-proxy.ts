// A plain-HTTP front for the API server, as `kubectl proxy` is: it listens on loopback without TLS and forwards
// every request over TLS with its own credentials (the admin token), so its clients need none.
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { Agent, request as httpsRequest } from "node:https";
import type { ControlPlane } from "./control-plane.js";

export class PlainHttpProxy {
  readonly url: string;
  readonly #server: Server;
  readonly #agent: Agent;

  private constructor(server: Server, url: string, agent: Agent) {
    this.#server = server;
    this.url = url;
    this.#agent = agent;
  }

  static async start(plane: ControlPlane): Promise<PlainHttpProxy> {
    const target = plane.apiServerAddress;
    const agent = new Agent({ ca: readFileSync(plane.servingCertFiles.cert), keepAlive: true });
    const server = createServer((request, response) => {
      const upstream = httpsRequest(
        {
          ...target,
          method: request.method,
          path: request.url,
          headers: {
            ...request.headers,
            host: `${target.host}:${target.port}`,
            authorization: `Bearer ${plane.adminToken}`,
          },
          agent,
        },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
          answer.on("error", () => response.destroy());
        },
      );
      upstream.on("error", () => response.destroy());
      // A client that goes away (a cancelled watch) ends the upstream request too.
      response.on("close", () => upstream.destroy());
      request.pipe(upstream);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    return new PlainHttpProxy(server, `http://127.0.0.1:${port}`, agent);
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#agent.destroy();
  }
}
