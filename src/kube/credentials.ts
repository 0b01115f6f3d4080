// Says which credentials and which CA a kubeconfig uses, in words fit for an error line; never the secrets.
import { readFileSync } from "node:fs";
import type { KubeConfig } from "@kubernetes/client-node";

export type CredentialsDescription = {
  /** e.g. `user "admin" (token, service account system:serviceaccount:ns:sa, expired at 2026-…Z)`. */
  readonly user: string;
  /** e.g. `CA file /var/run/…/ca.crt`, or `the system's trusted CAs`. */
  readonly ca: string;
  /** The exec plugin's installHint from the kubeconfig, on one line: what to do when it is not installed. */
  readonly installHint?: string;
};

export function describeCredentials(config: KubeConfig, now = Date.now()): CredentialsDescription {
  const hint = (config.getCurrentUser()?.exec as { installHint?: unknown } | undefined)?.installHint;
  const installHint = typeof hint === "string" ? hint.replace(/\s+/g, " ").trim() : "";
  return { user: describeUser(config, now), ca: describeCa(config), ...(installHint && { installHint }) };
}

function describeUser(config: KubeConfig, now: number): string {
  const user = config.getCurrentUser();
  if (!user) return "no user (anonymous)";
  const tokenFile = (user.authProvider as { config?: { tokenFile?: unknown } } | undefined)?.config?.tokenFile;
  const exec = (user.exec as { command?: unknown } | undefined)?.command;
  let how: string;
  if (typeof tokenFile === "string") how = `token file ${tokenFile}${tokenClaims(readToken(tokenFile), now)}`;
  else if (user.token) how = `token${tokenClaims(user.token, now)}`;
  else if (typeof exec === "string") how = `exec plugin ${exec}`;
  else if (user.certFile || user.certData) how = `client certificate${user.certFile ? ` ${user.certFile}` : ""}`;
  else if (user.username) how = `basic auth as ${user.username}`;
  else how = "no credentials";
  return `user "${user.name}" (${how})`;
}

function describeCa(config: KubeConfig): string {
  const cluster = config.getCurrentCluster();
  if (!cluster) return "no cluster";
  if (cluster.skipTLSVerify) return "no CA (insecure-skip-tls-verify)";
  if (cluster.caFile) return `CA file ${cluster.caFile}`;
  if (cluster.caData) return `the certificate-authority-data of cluster "${cluster.name}"`;
  return "the system's trusted CAs";
}

function readToken(file: string): string {
  try {
    return readFileSync(file, "utf8").trim();
  } catch {
    return "";
  }
}

/**
 * What a JWT says about itself (unverified, for the message only): the subject and, when it is past, the
 * expiry. A token that is not a JWT says nothing.
 */
export function tokenClaims(token: string, now = Date.now()): string {
  const payload = token.split(".")[1];
  if (token.split(".").length !== 3 || payload === undefined) return "";
  let claims: { sub?: unknown; exp?: unknown };
  try {
    claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as typeof claims;
  } catch {
    return "";
  }
  const parts: string[] = [];
  if (typeof claims.sub === "string") parts.push(`subject ${claims.sub}`);
  if (typeof claims.exp === "number" && claims.exp * 1000 <= now) {
    parts.push(`expired at ${new Date(claims.exp * 1000).toISOString()}`);
  }
  return parts.length === 0 ? "" : `, ${parts.join(", ")}`;
}
