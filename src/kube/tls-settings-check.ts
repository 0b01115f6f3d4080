// TLS settings of a kubeconfig that can never work, found before the first request rather than by every retry: a
// client certificate or key that is not PEM (or not a pair), and a certificate authority together with
// insecure-skip-tls-verify, which kubectl refuses too ("specifying a root certificates file with the insecure flag
// is not allowed"). Unreadable files are named before this (KubeConfigCredentials.check).
import { createPrivateKey, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { createSecureContext } from "node:tls";
import type { Cluster, User } from "@kubernetes/client-node";
import { messageOf } from "../util/message-of.js";

/** Throws naming the cluster or user whose TLS settings cannot work; `https` false for a plain-HTTP server. */
export function checkTlsSettings(cluster: Cluster, user: User | null, https: boolean): void {
  if (!https) return;
  if (cluster.skipTLSVerify && (cluster.caData || cluster.caFile)) {
    throw new Error(
      `kubeconfig cluster "${cluster.name}": insecure-skip-tls-verify is set together with a certificate-authority` +
        `${cluster.caFile ? ` (${cluster.caFile})` : "-data"}: verify the server or do not, not both (kubectl refuses this too)`,
    );
  }
  if (!user) return;
  const cert = pem(user.certData, user.certFile);
  const key = pem(user.keyData, user.keyFile);
  if (cert === undefined && key === undefined) return;
  try {
    // What a connection would do with them, then whether they are a pair (the TLS context does not check that).
    createSecureContext({ ...(cert && { cert }), ...(key && { key }) });
    if (cert && key && !new X509Certificate(cert).checkPrivateKey(createPrivateKey(key))) {
      throw new Error("the key is not the certificate's");
    }
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new Error(
      `kubeconfig user "${user.name}": its client certificate and key cannot be used: ${messageOf(error)}` +
        `${typeof code === "string" ? ` (${code})` : ""}`,
      { cause: error },
    );
  }
}

/** A PEM from a kubeconfig's -data field (base64) or its file. */
function pem(data: string | undefined, file: string | undefined): Buffer | undefined {
  if (data) return Buffer.from(data, "base64");
  return file ? readFileSync(file) : undefined;
}
