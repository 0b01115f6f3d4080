// A TCP proxy between a client and the API server (on loopback unless told otherwise) that tests can break on purpose.
import { createConnection, createServer, type Server, type Socket } from "node:net";

type Pair = { readonly client: Socket; readonly upstream: Socket };

export class TcpProxy {
  readonly port: number;
  readonly #server: Server;
  readonly #pairs = new Set<Pair>();
  #refusing = false;

  private constructor(server: Server, port: number, target: { host: string; port: number }) {
    this.#server = server;
    this.port = port;
    server.on("connection", (client: Socket) => this.#accept(client, target));
  }

  /** Listens on a port of the address (loopback and a free port by default) and forwards every connection to the target. */
  static async start(target: { host: string; port: number }, port = 0, host = "127.0.0.1"): Promise<TcpProxy> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    const address = server.address();
    return new TcpProxy(server, typeof address === "object" && address ? address.port : 0, target);
  }

  get connections(): number {
    return this.#pairs.size;
  }

  /** New connections are closed at once (like a server that is down); existing ones are left alone. */
  refuse(): void {
    this.#refusing = true;
  }

  /** Forward new connections again. */
  pass(): void {
    this.#refusing = false;
  }

  /** Resets every open connection. */
  cutAll(): void {
    for (const pair of this.#pairs) {
      pair.client.resetAndDestroy();
      pair.upstream.destroy();
    }
    this.#pairs.clear();
  }

  /** Open connections stop moving bytes, silently, while staying open: a hung watch. New ones still work. */
  stallAll(): void {
    for (const { client, upstream } of this.#pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
  }

  async close(): Promise<void> {
    this.cutAll();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #accept(client: Socket, target: { host: string; port: number }): void {
    if (this.#refusing) {
      client.resetAndDestroy();
      return;
    }
    const upstream = createConnection(target);
    const pair = { client, upstream };
    this.#pairs.add(pair);
    const drop = () => {
      this.#pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    client.pipe(upstream);
    upstream.pipe(client);
  }
}
