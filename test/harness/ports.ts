// Free loopback ports for the test servers.
import { createServer } from "node:net";

/** Asks the kernel for a free port on 127.0.0.1. Racy by nature, but the window is milliseconds. */
export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
