// Credentials from a kubeconfig: client-node resolves the user (token, token file, exec plugin, OIDC, client
// certificate) and the TLS settings. Only the type is imported here; the module loads with the kubeconfig files.
import type { KubeConfig } from "@kubernetes/client-node";
import type { Authentication, ClusterCredentials, TlsOptions } from "./cluster-credentials.js";
import { type CredentialsDescription, describeCredentials } from "./credentials.js";

export class KubeConfigCredentials implements ClusterCredentials {
  readonly server: string;
  readonly config: KubeConfig;

  constructor(config: KubeConfig) {
    const cluster = config.getCurrentCluster();
    if (!cluster) throw new Error(`kubeconfig context "${config.getCurrentContext()}" names no cluster`);
    if (cluster.proxyUrl) throw new Error(`kubeconfig cluster "${cluster.name}": proxy-url is not supported`);
    this.server = cluster.server.replace(/\/+$/, "");
    this.config = config;
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

  describe(now = Date.now()): CredentialsDescription {
    return describeCredentials(this.config, now);
  }
}
