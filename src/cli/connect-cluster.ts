// Opens the connection both commands use: credentials from config, one transport, and a who-am-I probe.
import type { Config } from "../config/config.js";
import { loadKubeConfig } from "../kube/connect.js";
import { KubeTransport } from "../kube/transport.js";
import { whoAmI } from "../kube/whoami.js";
import type { Logger } from "../observe/logger.js";
import type { Metrics } from "../observe/metrics.js";
import { VERSION } from "./version.js";

/**
 * Bad or missing credentials throw (the caller exits); an unreachable server only logs a warning, since the
 * reflectors keep retrying. Logs where the credentials came from and who the server says we are, never secrets.
 */
export async function connectCluster(config: Config, metrics: Metrics, log: Logger): Promise<KubeTransport> {
  const { config: kubeConfig, source } = loadKubeConfig({
    kubeconfig: config.kubeconfig ?? "",
    context: config.context ?? "",
  });
  const transport = new KubeTransport(kubeConfig, {
    userAgent: `cni-repair/${VERSION}`,
    observe: (verb, code) => metrics.apiRequests.inc({ verb, code }),
  });
  log.info("using credentials", { source, server: transport.server });
  try {
    log.info("connected", { server: transport.server, identity: await whoAmI(transport) });
  } catch (error) {
    log.warn("cannot reach the API server yet; will keep trying", {
      server: transport.server,
      error: (error as Error).message,
    });
  }
  return transport;
}
