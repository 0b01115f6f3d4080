// Real HTTP/1.1 servers on 127.0.0.1 for the transport's dispatch tests, each request handed to a handler, and a
// fresh undici Agent for each test to reach them with.
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Connections } from "../../src/kube/dispatch.js";
import { undiciConnections } from "../../src/kube/undici-connections.js";

export type Handler = (response: ServerResponse, path: string, request: IncomingMessage) => void;

export type LocalServer = { readonly server: Server; readonly origin: string };

export type LocalServers = {
  /** This test's undici Agent. */
  readonly connections: Connections;
  /** Starts a server that is closed after this test. */
  serve(handler: Handler): Promise<LocalServer>;
};

/** Call in a describe block: each test gets a new Agent, and every server it starts is closed after it. */
export function localServers(): LocalServers {
  let connections: Connections | undefined;
  const servers: Server[] = [];
  beforeEach(() => {
    connections = undiciConnections({});
  });
  afterEach(async () => {
    await connections?.close();
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      if (server.listening) server.close();
    }
  });
  return {
    get connections(): Connections {
      if (connections === undefined) throw new Error("localServers: the connections exist only inside a test");
      return connections;
    },
    async serve(handler: Handler): Promise<LocalServer> {
      const server = createServer((request, response) => handler(response, request.url ?? "", request));
      servers.push(server);
      server.listen(0, "127.0.0.1");
      await once(server, "listening");
      return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
    },
  };
}
