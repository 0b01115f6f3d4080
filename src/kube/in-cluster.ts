// In-cluster credentials without @kubernetes/client-node (importing it costs ~90 MB RSS and ~0.6 s at every start,
// for a node agent that needs three files and two environment variables): the service-account token, re-read on
// every call so a token the kubelet rotated is used from the next refresh on, the CA, and the namespace.
import { existsSync, readFileSync } from "node:fs";
import { isIP, isIPv6 } from "node:net";
import { join } from "node:path";
import type { Authentication, ClusterCredentials, TlsOptions } from "./cluster-credentials.js";
import { tokenClaims } from "./credentials.js";

export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/**
 * The in-cluster service account when a pod's environment is there (KUBERNETES_SERVICE_HOST/PORT and the token
 * file), else undefined. `CNI_REPAIR_IN_CLUSTER_ROOT` prefixes the files' paths, so tests can run "in-cluster"
 * against a local API server with a TokenRequest token in a temporary directory.
 */
export function inClusterCredentials(env: NodeJS.ProcessEnv): InClusterCredentials | undefined {
  const dir = join(env.CNI_REPAIR_IN_CLUSTER_ROOT ?? "", SERVICE_ACCOUNT_DIR);
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port || !existsSync(join(dir, "token"))) return undefined;
  return new InClusterCredentials(dir, host, port);
}

/** Where in-cluster credentials are looked for, for the message when there are none. */
export function inClusterTokenPath(env: NodeJS.ProcessEnv): string {
  return join(env.CNI_REPAIR_IN_CLUSTER_ROOT ?? "", SERVICE_ACCOUNT_DIR, "token");
}

export class InClusterCredentials implements ClusterCredentials {
  readonly server: string;
  readonly tls: TlsOptions;
  readonly namespace: string | undefined;
  readonly dir: string;
  readonly #tokenFile: string;
  readonly #caFile: string;

  constructor(dir: string, host: string, port: string) {
    this.dir = dir;
    this.server = serviceUrl(host, port);
    this.#tokenFile = join(dir, "token");
    this.#caFile = join(dir, "ca.crt");
    // Without ca.crt Node's default roots verify the server: with the chart's --use-openssl-ca (sizing.*.nodeOptions)
    // those are the image's /etc/ssl, the system's CAs, as client-go's.
    this.tls = existsSync(this.#caFile) ? { ca: readFileSync(this.#caFile) } : {};
    this.namespace = readTrimmed(join(dir, "namespace")) || undefined;
  }

  async authenticate(): Promise<Authentication> {
    const token = readTrimmed(this.#tokenFile);
    return { headers: token ? { authorization: `Bearer ${token}` } : {}, tls: this.tls };
  }

  describe(now = Date.now()): { user: string; ca: string } {
    const claims = tokenClaims(readTrimmed(this.#tokenFile), now);
    return {
      user: `the in-cluster service account (token file ${this.#tokenFile}${claims})`,
      ca: this.tls.ca === undefined ? "the system's trusted CAs" : `CA file ${this.#caFile}`,
    };
  }
}

/**
 * The API server's URL from the service variables the kubelet sets; throws naming a variable that cannot be part of
 * one (set by hand, or overridden in the pod spec), since no retry would make it work.
 */
/** Letters, digits, hyphens and dots, as DNS names are written (RFC 1123). */
const DNS_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$/;

function serviceUrl(host: string, port: string): string {
  const number = Number(port);
  if (!/^\d+$/.test(port) || number < 1 || number > 65_535) {
    throw new Error(`KUBERNETES_SERVICE_PORT "${port}" is not a port number (1-65535)`);
  }
  if (isIP(host) === 0 && !DNS_NAME.test(host)) {
    throw new Error(`KUBERNETES_SERVICE_HOST "${host}" is not a host name or IP address`);
  }
  // An IPv6 service address needs brackets in a URL.
  return `https://${isIPv6(host) ? `[${host}]` : host}:${number}`;
}

function readTrimmed(file: string): string {
  try {
    return readFileSync(file, "utf8").trim();
  } catch {
    return "";
  }
}
