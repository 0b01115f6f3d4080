// Opens the connection both commands use: credentials from config, one transport, and a who-am-I probe.
import type { Config } from "../config/config.js";
import { loadCredentials } from "../kube/connect.js";
import { credentialsErrorOf, fatalConnectError } from "../kube/fatal-connect-error.js";
import { KubeTransport } from "../kube/transport.js";
import { whoAmI } from "../kube/whoami.js";
import type { Logger } from "../observe/logger.js";
import type { Metrics } from "../observe/metrics.js";
import { messageOf } from "../util/message-of.js";
import { VERSION } from "./version.js";

/**
 * Bad or missing credentials throw (the caller exits 1), and so do a 401 or 403 to the first request and a
 * server certificate that does not verify: no retry cures those. An unreachable server only logs a warning, since
 * the reflectors keep retrying. Logs where the credentials came from and who the server says we are, never secrets.
 */
export async function connectCluster(config: Config, metrics: Metrics, log: Logger): Promise<KubeTransport> {
  const { transport, source } = await openTransport(config, metrics, log);
  try {
    await checkConnection(transport, source, log);
  } catch (error) {
    await transport.close();
    throw error;
  }
  return transport;
}

/** The transport from the configured credentials, before any request (bad or missing credentials throw). */
export async function openTransport(
  config: Config,
  metrics: Metrics,
  log: Logger,
): Promise<{ transport: KubeTransport; source: string }> {
  const settings = { kubeconfig: config.kubeconfig ?? "", context: config.context ?? "" };
  const { credentials, source, reload } = await loadCredentials(settings);
  const transport = new KubeTransport(credentials, {
    userAgent: `cni-repair/${VERSION}`,
    observe: (verb, code) => metrics.apiRequests.inc({ verb, code }),
    reload,
    // A dead connection is dropped within one stall timeout, so the restarted watch dials a live one.
    connectionCheckMs: config.watchStallTimeoutMs / 2,
  });
  log.info("using credentials", { source, server: transport.server });
  return { transport, source };
}

/** The who-am-I probe: throws when no retry can cure the answer (the caller closes the transport). */
export async function checkConnection(transport: KubeTransport, source: string, log: Logger): Promise<void> {
  try {
    log.info("connected", { server: transport.server, identity: await whoAmI(transport) });
  } catch (error) {
    const fatal = fatalConnectError(error, transport.server, transport.credentials.describe());
    if (fatal !== undefined) throw new Error(`${fatal}; credentials from ${source}`, { cause: error });
    // A request that failed for want of credentials never reached the server: say which it was.
    const what = credentialsErrorOf(error) ? "cannot get credentials yet" : "cannot reach the API server yet";
    log.warn(`${what}; will keep trying`, { server: transport.server, error: messageOf(error) });
  }
}
