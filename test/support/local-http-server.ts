// A real HTTP/1.1 server on 127.0.0.1 for the transport's dispatch tests: each request goes to `handler`.
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type Handler = (response: ServerResponse, path: string, request: IncomingMessage) => void;

export async function serve(handler: Handler): Promise<{ server: Server; origin: string }> {
  const server = createServer((request, response) => handler(response, request.url ?? "", request));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}
