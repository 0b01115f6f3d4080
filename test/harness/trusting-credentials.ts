// Credentials for a local test peer: no auth headers, and the peer's certificate as the only CA trusted.
import type { ClusterCredentials } from "../../src/kube/cluster-credentials.js";

export function trustingCredentials(server: string, ca: Buffer): ClusterCredentials {
  return {
    server,
    namespace: undefined,
    authenticate: async () => ({ headers: {}, tls: { ca } }),
    describe: () => ({ user: "none", ca: "the API server's certificate" }),
  };
}
