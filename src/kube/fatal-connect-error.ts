// Tells a connection failure that no retry can cure (rejected credentials, a certificate that does not verify)
// from one that time may cure (the server is not up yet, a timeout, a 5xx), and words the first as one line.
import { ApiError } from "./api-error.js";
import { CredentialsError } from "./credential-refresh.js";
import type { CredentialsDescription } from "./credentials.js";

/** OpenSSL's verification failures as Node reports them in `error.code`, plus Node's own hostname check. */
const TLS_VERIFY_CODES = new Set([
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_DECRYPT_CERT_SIGNATURE",
  "UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY",
  "CERT_SIGNATURE_FAILURE",
  "CERT_NOT_YET_VALID",
  "CERT_HAS_EXPIRED",
  "CERT_REVOKED",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "CERT_CHAIN_TOO_LONG",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "INVALID_CA",
  "INVALID_PURPOSE",
  "PATH_LENGTH_EXCEEDED",
  "HOSTNAME_MISMATCH",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/** OpenSSL's answers to a server that does not speak TLS at all: an https:// URL for a plain-HTTP port. */
const NOT_TLS_CODES = new Set(["ERR_SSL_WRONG_VERSION_NUMBER", "ERR_SSL_PACKET_LENGTH_TOO_LONG"]);

/** Why a credential plugin could not be started at all (spawn): not there, or not executable. */
const UNRUNNABLE_CODES = new Set(["ENOENT", "EACCES", "ENOTDIR"]);

/** What Go's TLS server answers a plain-HTTP request with (the kube-apiserver's own port, as http://). */
const PLAIN_HTTP_TO_TLS = "Client sent an HTTP request to an HTTPS server";

/**
 * The line to exit with when `error` (from the first request) shows the credentials, the server's certificate or
 * the URL's scheme are wrong; undefined when retrying may help. Names the server, the user and the CA, never a
 * secret.
 */
export function fatalConnectError(
  error: unknown,
  server: string,
  credentials: CredentialsDescription,
): string | undefined {
  // A plugin that failed or is slow may do better next time; one that cannot be started never will.
  const credentialsError = credentialsErrorOf(error);
  if (credentialsError) {
    const unrunnable = causeWithCode(credentialsError, UNRUNNABLE_CODES);
    if (!unrunnable) return undefined;
    // kubectl shows the kubeconfig's installHint for a plugin that is not there (GKE's names its package).
    const hint =
      unrunnable.code === "ENOENT" && credentials.installHint ? `; install hint: ${credentials.installHint}` : "";
    return `${credentialsError.message} (the exec plugin cannot be started: ${unrunnable.code})${hint}`;
  }
  if (error instanceof ApiError && error.status === 401) {
    return `${server} rejected the credentials of ${credentials.user}: 401 Unauthorized (the token or certificate is invalid, expired or revoked)`;
  }
  if (error instanceof ApiError && error.status === 403) {
    return `${server} refused ${credentials.user} a SelfSubjectReview, which every authenticated user may create: 403 Forbidden (the credentials were not recognised, or the request went to the wrong server)`;
  }
  const tls = tlsVerifyError(error);
  if (tls) {
    return `the certificate of ${server} does not verify against ${credentials.ca}: ${tls.message} (${tls.code})`;
  }
  const notTls = causeWithCode(error, NOT_TLS_CODES);
  if (notTls) {
    return `${server} does not speak TLS (${notTls.code}): if it is a plain-HTTP endpoint such as kubectl proxy, write its server as http://`;
  }
  if (error instanceof ApiError && error.status === 400 && error.message.includes(PLAIN_HTTP_TO_TLS)) {
    return `${server} speaks HTTPS, not plain HTTP (400: ${PLAIN_HTTP_TO_TLS}): write its server as https://`;
  }
  return undefined;
}

/** Why a request was not sent: its credentials could not be had (transport.ts wraps it in an ApiError). */
export function credentialsErrorOf(error: unknown): CredentialsError | undefined {
  if (error instanceof CredentialsError) return error;
  return error instanceof ApiError && error.cause instanceof CredentialsError ? error.cause : undefined;
}

function causeWithCode(error: unknown, codes: ReadonlySet<string>): { code: string; message: string } | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && codes.has(code)) return { code, message: current.message };
  }
  return undefined;
}

/** The TLS verification error somewhere in the cause chain, if any. */
export function tlsVerifyError(error: unknown): { code: string; message: string } | undefined {
  return causeWithCode(error, TLS_VERIFY_CODES);
}
