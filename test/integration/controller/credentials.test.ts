// Credentials and TLS are checked at startup: a wrong or missing CA, a CA beside insecure-skip-tls-verify, a client key
// that is not its certificate's, a scheme that does not match the port (https:// to plain HTTP, http:// to TLS) or is
// neither, a garbage token and an expired token each end the
// process with exit 1 within 10 s and one line naming the cause (server, user, CA), no stack trace. Refused
// connections are not such a cause: the controller keeps trying (see the command-line tests).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CoreV1Api } from "@kubernetes/client-node";
import { expect } from "chai";
import { repositoryFile } from "../../harness/binaries.js";
import { ControllerProcess } from "../../harness/controller-process.js";
import { createTestNamespace } from "../../harness/namespaces.js";
import { ownedTempDir } from "../../harness/owned-dirs.js";
import { PlainHttpProxy } from "../../harness/plain-http-proxy.js";
import { serviceAccountJwt } from "../../harness/service-account-jwt.js";
import { controlPlane } from "../../harness/shared-control-plane.js";
import { PLAIN } from "./start.js";

/** The acceptance bound: the operator learns what is wrong within this long. */
const EXIT_WITHIN_MS = 10_000;

type KubeconfigDoc = {
  clusters: { cluster: Record<string, unknown> }[];
  users: { name: string; user: Record<string, unknown> }[];
};

describe("startup: credentials and TLS that cannot work are fatal", () => {
  let dir: string;

  before(() => {
    dir = ownedTempDir("cni-repair-credentials-");
  });

  /** A kubeconfig for the shared API server, changed by `edit`. */
  const kubeconfig = (name: string, edit: (doc: KubeconfigDoc) => void, token?: string, user?: string): string => {
    const doc = JSON.parse(controlPlane().kubeconfigYaml(token, user)) as KubeconfigDoc;
    edit(doc);
    const path = join(dir, `${name}.kubeconfig`);
    writeFileSync(path, JSON.stringify(doc), { mode: 0o600 });
    return path;
  };

  /** A kubeconfig whose users present a client certificate and key from test/fixtures instead of a token. */
  const clientPairKubeconfig = (name: string, certificate: string, key: string): string =>
    kubeconfig(name, (doc) => {
      for (const { user } of doc.users) {
        delete user.token;
        user["client-certificate"] = repositoryFile(`test/fixtures/${certificate}`);
        user["client-key"] = repositoryFile(`test/fixtures/${key}`);
      }
    });

  /** Runs the controller to its exit; returns the code, how long it took and its stderr lines. */
  const runUntilExit = async (args: string[], env: Record<string, string> = {}) => {
    const started = performance.now();
    const controller = await ControllerProcess.start({ args: [...args, ...PLAIN], env, waitReady: false });
    const timer = setTimeout(() => void controller.stop("SIGKILL"), 30_000);
    const code = await controller.exited;
    clearTimeout(timer);
    return { code, elapsedMs: performance.now() - started, controller };
  };

  /** Exit 1 in time, exactly one error line, which matches `cause`, and no stack trace anywhere. */
  const expectFatal = (run: Awaited<ReturnType<typeof runUntilExit>>, cause: RegExp) => {
    const output = run.controller.output();
    expect(run.code, output).to.equal(1);
    expect(run.elapsedMs, "time to exit").to.be.below(EXIT_WITHIN_MS);
    const errors = run.controller.logs.filter((line) => line.level === "error");
    expect(errors, output).to.have.length(1);
    expect(String(errors[0]?.error)).to.match(cause);
    expect(output).not.to.match(/^\s+at /m);
  };

  it("a CA that did not sign the server's certificate: names the server and the CA file", async () => {
    const wrongCa = repositoryFile("test/fixtures/wrong-ca.crt");
    const path = kubeconfig("wrong-ca", (doc) => {
      for (const { cluster } of doc.clusters) {
        delete cluster["certificate-authority-data"];
        cluster["certificate-authority"] = wrongCa;
      }
    });
    const run = await runUntilExit([`--kubeconfig=${path}`]);
    expectFatal(
      run,
      new RegExp(
        `^the certificate of ${controlPlane().server} does not verify against CA file ${wrongCa}: .+ \\([A-Z_]+\\)`,
      ),
    );
  });

  it("a CA file that does not exist: names the cluster and the file", async () => {
    const missing = join(dir, "no-such-ca.crt");
    const path = kubeconfig("missing-ca", (doc) => {
      for (const { cluster } of doc.clusters) {
        delete cluster["certificate-authority-data"];
        cluster["certificate-authority"] = missing;
      }
    });
    expectFatal(
      await runUntilExit([`--kubeconfig=${path}`]),
      new RegExp(`kubeconfig cluster "[^"]+" certificate-authority file "${missing}" cannot be read: ENOENT`),
    );
  });

  it("a client key that is not its certificate's: names the user, before any request", async () => {
    const path = clientPairKubeconfig("mismatched-pair", "client-rsa.crt", "client-ec.key");
    expectFatal(
      await runUntilExit([`--kubeconfig=${path}`]),
      /^kubeconfig user "[^"]+": its client certificate and key cannot be used: the key is not the certificate's$/,
    );
  });

  it("a certificate pair the server does not trust passes the check: the server's answer is what ends the start", async () => {
    const path = clientPairKubeconfig("untrusted-pair", "client-rsa.crt", "client-rsa.key");
    const run = await runUntilExit([`--kubeconfig=${path}`]);
    expect(run.code, run.controller.output()).to.equal(1);
    const [error] = run.controller.logs.filter((line) => line.level === "error");
    expect(String(error?.error)).to.match(new RegExp(`^${controlPlane().server} (rejected|refused) `));
  });

  it("a CA beside insecure-skip-tls-verify: names the cluster, as kubectl refuses it", async () => {
    const path = kubeconfig("insecure-with-ca", (doc) => {
      for (const { cluster } of doc.clusters) cluster["insecure-skip-tls-verify"] = true;
    });
    expectFatal(
      await runUntilExit([`--kubeconfig=${path}`]),
      /^kubeconfig cluster "[^"]+": insecure-skip-tls-verify is set together with a certificate-authority-data/,
    );
  });

  it("https:// to a plain-HTTP port: names the server and says to write http://", async () => {
    const proxy = await PlainHttpProxy.start(controlPlane());
    try {
      const tlsToPlain = proxy.url.replace("http:", "https:");
      const path = kubeconfig("https-to-plain", (doc) => {
        for (const { cluster } of doc.clusters) cluster.server = tlsToPlain;
      });
      expectFatal(
        await runUntilExit([`--kubeconfig=${path}`]),
        new RegExp(`^${tlsToPlain} does not speak TLS \\(ERR_SSL_[A-Z_]+\\): .*write its server as http://`),
      );
    } finally {
      await proxy.close();
    }
  });

  it("http:// to the API server's TLS port: names the server and says to write https://", async () => {
    const plainToTls = controlPlane().server.replace("https:", "http:");
    const path = kubeconfig("http-to-tls", (doc) => {
      for (const { cluster } of doc.clusters) cluster.server = plainToTls;
    });
    expectFatal(
      await runUntilExit([`--kubeconfig=${path}`]),
      new RegExp(`^${plainToTls} speaks HTTPS, not plain HTTP \\(400: .*\\): write its server as https://`),
    );
  });

  it("a scheme other than https or http: names the cluster, the server and the scheme", async () => {
    const path = kubeconfig("ftp", (doc) => {
      for (const { cluster } of doc.clusters) cluster.server = "ftp://127.0.0.1:6443";
    });
    expectFatal(
      await runUntilExit([`--kubeconfig=${path}`]),
      /kubeconfig cluster "[^"]+": server "ftp:\/\/127\.0\.0\.1:6443" has scheme ftp, expected https or http/,
    );
  });

  it("a garbage token: names the server and the user", async () => {
    const path = kubeconfig("garbage", () => {}, "not-a-token", "someone");
    const run = await runUntilExit([`--kubeconfig=${path}`]);
    expectFatal(
      run,
      new RegExp(`^${controlPlane().server} rejected the credentials of user "someone" \\(token\\): 401 Unauthorized`),
    );
  });

  it("an expired service-account token (signed by the cluster's key): names the account and when it expired", async () => {
    const api = controlPlane().kubeConfig().makeApiClient(CoreV1Api);
    const namespace = await createTestNamespace(api);
    await api.createNamespacedServiceAccount({ namespace, body: { metadata: { name: "expired" } } });
    const account = { namespace, name: "expired" };

    // The same kind of token, still valid, is accepted: only the expiry is wrong with the expired one.
    const valid = await serviceAccountJwt(controlPlane(), account, new Date(Date.now() + 3_600_000));
    const review = await controlPlane()
      .kubeConfig(valid, "expired")
      .makeApiClient(CoreV1Api)
      .listNamespacedPod({ namespace })
      .then(
        () => "allowed",
        (error: { code?: number }) => String(error.code),
      );
    expect(review, "a valid token of the account authenticates (403: authorised nothing, but known)").to.be.oneOf([
      "allowed",
      "403",
    ]);

    const expiredAt = new Date(Date.now() - 3_600_000);
    const path = kubeconfig(
      "expired",
      () => {},
      await serviceAccountJwt(controlPlane(), account, expiredAt),
      "expired",
    );
    const run = await runUntilExit([`--kubeconfig=${path}`]);
    expectFatal(
      run,
      new RegExp(
        `^${controlPlane().server} rejected the credentials of user "expired" \\(token, subject system:serviceaccount:${namespace}:expired, expired at ${expiredAt.toISOString().slice(0, 19)}`,
      ),
    );
  });
});
