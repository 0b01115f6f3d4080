// The transport's undici parts, loaded from their own modules, are the package's own Agent and request.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { expect } from "chai";
import * as undici from "undici";
import { Agent, request } from "../../../src/kube/undici-parts.js";

describe("undici parts", () => {
  it("Agent is the class the package exports", () => {
    expect(Agent).to.equal(undici.Agent);
  });

  it("request answers through an Agent with a Node stream body", async () => {
    const server = createServer((_request, response) => response.end("line one\nline two\n"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const agent = new Agent();
    try {
      const { port } = server.address() as AddressInfo;
      const answer = await request(agent, { origin: `http://127.0.0.1:${port}`, path: "/watch?x=1", method: "GET" });
      expect(answer.statusCode).to.equal(200);
      expect(answer.body).to.be.instanceOf(Readable);
      expect(await answer.body.text()).to.equal("line one\nline two\n");
    } finally {
      await agent.close();
      server.close();
    }
  });
});
