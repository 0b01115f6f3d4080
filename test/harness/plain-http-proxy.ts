// A plain-HTTP front for the API server, as `kubectl proxy` is: it listens on loopback without TLS and forwards
// every request over TLS with its own credentials (the admin token), so its clients need none.
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { Agent } from "node:https";
import { closeProxy, forwardToApiServer, listenOnLoopback } from "./api-server-forwarding.js";
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
    const server = createServer((request, response) =>
      forwardToApiServer(request, response, { target, agent, authorization: `Bearer ${plane.adminToken}` }),
    );
    const port = await listenOnLoopback(server);
    return new PlainHttpProxy(server, `http://127.0.0.1:${port}`, agent);
  }

  async close(): Promise<void> {
    await closeProxy(this.#server, this.#agent);
  }
}
