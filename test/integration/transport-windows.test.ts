// The transport's HTTP/2 receive windows as a real HTTP/2 peer sees them: the stream window in the client's SETTINGS
// and the connection window after its WINDOW_UPDATE. The API server cannot show what a client advertised, so the peer
// is a local TLS HTTP/2 server with the API server's certificate (the client trusts it as it trusts the server).
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { createSecureServer, type Http2SecureServer } from "node:http2";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { CONNECTION_WINDOW_BYTES, KubeTransport, STREAM_WINDOW_BYTES } from "../../src/kube/transport.js";
import { controlPlane } from "../harness/shared-control-plane.js";
import { trustingCredentials } from "../harness/trusting-credentials.js";

type Windows = { readonly stream: number | undefined; readonly connection: number | undefined };

const BODY = "{}";

describe("kube/transport: HTTP/2 receive windows", () => {
  let server: Http2SecureServer | undefined;
  let transport: KubeTransport | undefined;

  afterEach(async () => {
    await transport?.close();
    transport = undefined;
    server?.close();
    server = undefined;
  });

  it("lets the server send 4 MiB a stream and 8 MiB a connection ahead of what it read (undici's defaults: 256/512 KiB)", async () => {
    const files = controlPlane().servingCertFiles;
    const cert = readFileSync(files.cert);
    const seen: Windows[] = [];
    server = createSecureServer({ cert, key: readFileSync(files.key) });
    server.on("stream", (stream) => {
      const session = stream.session;
      seen.push({ stream: session?.remoteSettings.initialWindowSize, connection: session?.state.remoteWindowSize });
      stream.respond({ ":status": 200, "content-type": "application/json" });
      stream.end(BODY);
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    transport = new KubeTransport(trustingCredentials(`https://127.0.0.1:${port}`, cert), {
      userAgent: "windows-test",
    });

    await transport.request("get", "GET", "/version");
    // On the same connection, after the client's WINDOW_UPDATE (sent once it connected) and the first answer.
    await transport.request("get", "GET", "/version");

    expect(seen).to.have.length(2, "both requests on one connection");
    expect(seen[1]).to.deep.equal({
      stream: STREAM_WINDOW_BYTES,
      connection: CONNECTION_WINDOW_BYTES - BODY.length,
    });
    expect(STREAM_WINDOW_BYTES).to.equal(4 * 1024 * 1024);
    expect(CONNECTION_WINDOW_BYTES).to.equal(8 * 1024 * 1024);
  });
});
