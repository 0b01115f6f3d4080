// Credentials from a kubeconfig: client-node resolves the user (token, token file, exec plugin, OIDC, client
// certificate) and the TLS settings. Only the type is imported here; the module loads with the kubeconfig files.
import { accessSync, constants } from "node:fs";
import type { Cluster, KubeConfig } from "@kubernetes/client-node";
import { messageOf } from "../util/message-of.js";
import type { Authentication, ClusterCredentials, TlsOptions } from "./cluster-credentials.js";
import { type CredentialsDescription, describeCredentials } from "./credentials.js";
import { withExecInfo } from "./exec-plugin-setup.js";
import { checkTlsSettings } from "./tls-settings-check.js";

export class KubeConfigCredentials implements ClusterCredentials {
  readonly server: string;
  readonly config: KubeConfig;

  constructor(config: KubeConfig) {
    const cluster = config.getCurrentCluster();
    if (!cluster) throw new Error(`kubeconfig context "${config.getCurrentContext()}" names no cluster`);
    if (cluster.proxyUrl) throw new Error(`kubeconfig cluster "${cluster.name}": proxy-url is not supported`);
    this.server = serverUrl(cluster.name, cluster.server);
    this.config = execPluginFor(this.server.startsWith("http:") ? plainHttp(config, cluster.name) : config, cluster);
  }

  get namespace(): string | undefined {
    return this.config.getContextObject(this.config.getCurrentContext())?.namespace?.trim() || undefined;
  }

  async authenticate(): Promise<Authentication> {
    const options: { headers?: Record<string, unknown>; auth?: string } & TlsOptions = { headers: {} };
    await this.config.applyToHTTPSOptions(options);
    const headers: Record<string, string> = {};
    for (const [key, value] of Object.entries(options.headers ?? {})) headers[key.toLowerCase()] = String(value);
    if (options.auth) headers.authorization = `Basic ${Buffer.from(options.auth).toString("base64")}`;
    return { headers, tls: options };
  }

  /**
   * Throws naming what in the TLS settings can never work: first a file (the cluster's certificate-authority, the
   * user's client-certificate and client-key) that cannot be read, then the settings themselves
   * (tls-settings-check.ts). kubectl refuses to start then, and retrying would only repeat the error on every
   * request. Checked once at start; a later reload reads them as it goes.
   */
  check(): void {
    const cluster = this.config.getCurrentCluster();
    const user = this.config.getCurrentUser();
    for (const [what, file] of [
      [`cluster "${cluster?.name}" certificate-authority`, cluster?.caFile],
      [`user "${user?.name}" client-certificate`, user?.certFile],
      [`user "${user?.name}" client-key`, user?.keyFile],
    ] as const) {
      if (!file) continue;
      try {
        accessSync(file, constants.R_OK);
      } catch (error) {
        throw new Error(`kubeconfig ${what} file "${file}" cannot be read: ${messageOf(error)}`, { cause: error });
      }
    }
    if (cluster) checkTlsSettings(cluster, user, this.server.startsWith("https:"));
  }

  describe(now = Date.now()): CredentialsDescription {
    return describeCredentials(this.config, now);
  }
}

/**
 * The cluster's server as a URL without a trailing slash. As kubectl: no scheme means https://; a scheme other than
 * https:// or http:// can never work, so it is refused at once, naming it.
 */
export function serverUrl(clusterName: string, server: string): string {
  // "https:/" is a scheme with a broken authority (client-node leaves "https://" so), not a host named "https".
  if (/^[a-z][a-z0-9+.-]*:\/(?!\/)/i.test(server)) {
    throw new Error(`kubeconfig cluster "${clusterName}": server ${JSON.stringify(server)} is not a URL`);
  }
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(server) ? server : `https://${server}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new Error(`kubeconfig cluster "${clusterName}": server ${JSON.stringify(server)} is not a URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new Error(
      `kubeconfig cluster "${clusterName}": server ${JSON.stringify(server)} has scheme ${url.protocol.slice(0, -1)}, expected https or http`,
    );
  }
  return withScheme.replace(/^[a-z]+:/i, (scheme) => scheme.toLowerCase()).replace(/\/+$/, "");
}

/**
 * A plain-HTTP server (kubectl proxy): client-node refuses to build options for an http:// server unless TLS
 * verification is off, and over plain HTTP there is none to do, so the cluster says so (kubectl asks nothing).
 */
/** The current user's exec plugin, if it has one, told about `cluster` as kubectl tells it (exec-plugin-setup.ts). */
function execPluginFor(config: KubeConfig, cluster: Cluster): KubeConfig {
  const current = config.getCurrentUser();
  if (!current?.exec) return config;
  config.loadFromOptions({
    clusters: config.getClusters(),
    users: config.getUsers().map((user) => (user.name === current.name ? withExecInfo(user, cluster) : user)),
    contexts: config.getContexts(),
    currentContext: config.getCurrentContext(),
  });
  return config;
}

function plainHttp(config: KubeConfig, clusterName: string): KubeConfig {
  config.loadFromOptions({
    clusters: config
      .getClusters()
      .map((cluster) => (cluster.name === clusterName ? { ...cluster, skipTLSVerify: true } : cluster)),
    users: config.getUsers(),
    contexts: config.getContexts(),
    currentContext: config.getCurrentContext(),
  });
  return config;
}
