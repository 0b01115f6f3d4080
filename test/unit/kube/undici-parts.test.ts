// The transport's undici parts, loaded from their own modules, are the package's own Agent and fetch.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import * as undici from "undici";
import { Agent, fetch } from "../../../src/kube/undici-parts.js";

describe("undici parts", () => {
  it("Agent is the class the package exports", () => {
    expect(Agent).to.equal(undici.Agent);
  });

  it("fetch answers through an Agent over HTTP/1.1 (undici's WebAssembly parser)", async () => {
    const server = createServer((request, response) => response.end(`over HTTP/${request.httpVersion}`));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const agent = new Agent();
    try {
      const { port } = server.address() as AddressInfo;
      const response = await fetch(`http://127.0.0.1:${port}/`, { dispatcher: agent });
      expect(response.status).to.equal(200);
      expect(await response.text()).to.equal("over HTTP/1.1");
    } finally {
      await agent.close();
      server.close();
    }
  });
});
