// Which first-request failures end the process, and the one line that names their cause.
import { KubeConfig } from "@kubernetes/client-node";
import { expect } from "chai";
import { ApiError } from "../../../src/kube/api-error.js";
import { CredentialsError } from "../../../src/kube/credential-refresh.js";
import { describeCredentials, tokenClaims } from "../../../src/kube/credentials.js";
import { fatalConnectError, tlsVerifyError } from "../../../src/kube/fatal-connect-error.js";

const SERVER = "https://10.0.0.1:6443";
const credentials = { user: 'user "ops" (token)', ca: "CA file /etc/ca.crt" };

const jwt = (claims: Record<string, unknown>) =>
  `${Buffer.from('{"alg":"RS256"}').toString("base64url")}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.sig`;

/** What undici's fetch throws for a certificate that does not verify: a TypeError caused by the TLS error. */
function fetchFailure(code: string, message: string): ApiError {
  const tls = Object.assign(new Error(message), { code });
  return new ApiError("POST /x: no response", { status: 0, cause: new TypeError("fetch failed", { cause: tls }) });
}

describe("kube/fatalConnectError", () => {
  it("401: names the server and the user", () => {
    expect(fatalConnectError(new ApiError("x", { status: 401 }), SERVER, credentials)).to.equal(
      `${SERVER} rejected the credentials of user "ops" (token): 401 Unauthorized (the token or certificate is invalid, expired or revoked)`,
    );
  });

  it("403 to the first request: names the server and the user", () => {
    expect(fatalConnectError(new ApiError("x", { status: 403 }), SERVER, credentials)).to.match(
      /^https:\/\/10\.0\.0\.1:6443 refused user "ops" \(token\) a SelfSubjectReview.*403 Forbidden/,
    );
  });

  it("an exec plugin that cannot be started: its error and the spawn's code", () => {
    for (const code of ["ENOENT", "EACCES"]) {
      const spawn = Object.assign(new Error(`spawn /usr/local/bin/aws ${code}`), { code });
      const error = new CredentialsError(`cannot get credentials for user "eks" (exec plugin aws): ${spawn.message}`, {
        cause: spawn,
      });
      const fatal = `${error.message} (the exec plugin cannot be started: ${code})`;
      expect(fatalConnectError(error, SERVER, credentials)).to.equal(fatal);
      // As a request fails with it: unsent, status 0.
      const unsent = new ApiError(`POST /x: not sent: ${error.message}`, { status: 0, cause: error });
      expect(fatalConnectError(unsent, SERVER, credentials)).to.equal(fatal);
    }
  });

  it("an exec plugin that is not there: the kubeconfig's installHint, on one line; not for one not executable", () => {
    const config = new KubeConfig();
    config.loadFromOptions({
      clusters: [{ name: "c", server: SERVER, skipTLSVerify: false }],
      users: [
        {
          name: "gke",
          exec: { command: "gke-gcloud-auth-plugin", installHint: "Install gke-gcloud-auth-plugin\n  for kubectl." },
        },
      ],
      contexts: [{ name: "x", cluster: "c", user: "gke" }],
      currentContext: "x",
    });
    const described = describeCredentials(config);
    expect(described.installHint).to.equal("Install gke-gcloud-auth-plugin for kubectl.");
    const failing = (code: string) =>
      new CredentialsError(`cannot get credentials for ${described.user}: spawn gke-gcloud-auth-plugin ${code}`, {
        cause: Object.assign(new Error(`spawn gke-gcloud-auth-plugin ${code}`), { code }),
      });
    expect(fatalConnectError(failing("ENOENT"), SERVER, described)).to.match(
      /\(the exec plugin cannot be started: ENOENT\); install hint: Install gke-gcloud-auth-plugin for kubectl\.$/,
    );
    expect(fatalConnectError(failing("EACCES"), SERVER, described)).to.match(/cannot be started: EACCES\)$/);
  });

  it("an exec plugin that failed or did not answer in time: retried, not fatal", () => {
    const failed = new CredentialsError("cannot get credentials for x: throttled", { cause: new Error("throttled") });
    const slow = new CredentialsError("no credentials for x within 30 s: still waiting on it");
    expect(fatalConnectError(failed, SERVER, credentials)).to.equal(undefined);
    expect(fatalConnectError(slow, SERVER, credentials)).to.equal(undefined);
  });

  it("a certificate that does not verify: names the server, the CA, the reason and its code", () => {
    for (const code of [
      "SELF_SIGNED_CERT_IN_CHAIN",
      "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
      "ERR_TLS_CERT_ALTNAME_INVALID",
    ]) {
      expect(fatalConnectError(fetchFailure(code, "bad cert"), SERVER, credentials)).to.equal(
        `the certificate of ${SERVER} does not verify against CA file /etc/ca.crt: bad cert (${code})`,
      );
    }
  });

  it("a scheme that does not match the port: https:// to plain HTTP, http:// to TLS; says which to write", () => {
    for (const code of ["ERR_SSL_WRONG_VERSION_NUMBER", "ERR_SSL_PACKET_LENGTH_TOO_LONG"]) {
      expect(fatalConnectError(fetchFailure(code, "wrong version number"), SERVER, credentials)).to.equal(
        `${SERVER} does not speak TLS (${code}): if it is a plain-HTTP endpoint such as kubectl proxy, write its server as http://`,
      );
    }
    const plain = "http://10.0.0.1:6443";
    const answer = new ApiError("POST /x: 400: Client sent an HTTP request to an HTTPS server.\n", { status: 400 });
    expect(fatalConnectError(answer, plain, credentials)).to.equal(
      `${plain} speaks HTTPS, not plain HTTP (400: Client sent an HTTP request to an HTTPS server): write its server as https://`,
    );
    expect(fatalConnectError(new ApiError("POST /x: 400: bad request", { status: 400 }), plain, credentials)).to.equal(
      undefined,
    );
  });

  it("what time may cure is not fatal: refused, reset, timeouts, 5xx, 429", () => {
    expect(fatalConnectError(fetchFailure("ECONNREFUSED", "connect ECONNREFUSED"), SERVER, credentials)).to.equal(
      undefined,
    );
    expect(fatalConnectError(fetchFailure("UND_ERR_SOCKET", "other side closed"), SERVER, credentials)).to.equal(
      undefined,
    );
    for (const status of [429, 500, 503, 504]) {
      expect(fatalConnectError(new ApiError("x", { status }), SERVER, credentials), String(status)).to.equal(undefined);
    }
    expect(tlsVerifyError(new Error("plain"))).to.equal(undefined);
  });
});

describe("kube/describeCredentials", () => {
  const config = (user: Record<string, unknown>, cluster: Record<string, unknown>) => {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: "c", server: SERVER, skipTLSVerify: false, ...cluster }],
      users: [{ name: "u", ...user }],
      contexts: [{ name: "x", cluster: "c", user: "u" }],
      currentContext: "x",
    });
    return kubeConfig;
  };

  it("names the user, how it authenticates, and the CA, never the secret", () => {
    const token = jwt({ sub: "system:serviceaccount:ns:sa", exp: 1_000 });
    const described = describeCredentials(config({ token }, { caData: "AAAA" }), 2_000_000);
    expect(described.user).to.equal(
      'user "u" (token, subject system:serviceaccount:ns:sa, expired at 1970-01-01T00:16:40.000Z)',
    );
    expect(described.user).not.to.include(token);
    expect(described.ca).to.equal('the certificate-authority-data of cluster "c"');
    expect(describeCredentials(config({ token: "opaque" }, { caFile: "/ca.crt" })).ca).to.equal("CA file /ca.crt");
    expect(describeCredentials(config({ exec: { command: "aws" } }, {})).user).to.equal('user "u" (exec plugin aws)');
    expect(describeCredentials(config({ certFile: "/c.crt" }, {})).user).to.equal(
      'user "u" (client certificate /c.crt)',
    );
    expect(describeCredentials(config({}, {})).ca).to.equal("the system's trusted CAs");
    expect(describeCredentials(config({}, { skipTLSVerify: true })).ca).to.equal("no CA (insecure-skip-tls-verify)");
  });

  it("tokenClaims: an expiry only once past; nothing from a token that is not a JWT", () => {
    expect(tokenClaims(jwt({ exp: 2_000 }), 1_000_000)).to.equal("");
    expect(tokenClaims(jwt({ exp: 1_000 }), 1_000_000)).to.equal(", expired at 1970-01-01T00:16:40.000Z");
    expect(tokenClaims("opaque-token")).to.equal("");
    expect(tokenClaims("a.!!!.c")).to.equal("");
  });
});
