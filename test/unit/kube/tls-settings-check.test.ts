// checkTlsSettings: a client certificate or key that can never be used, and a CA beside insecure-skip-tls-verify,
// are refused before the first request, naming the user or the cluster.
import { readFileSync } from "node:fs";
import type { Cluster, User } from "@kubernetes/client-node";
import { expect } from "chai";
import { checkTlsSettings } from "../../../src/kube/tls-settings-check.js";
import { repositoryFile } from "../../harness/binaries.js";

const cluster: Cluster = { name: "c", server: "https://10.0.0.1:6443", skipTLSVerify: false };
const base64 = (text: string | Buffer) => Buffer.from(text).toString("base64");
const fixture = (name: string) => readFileSync(repositoryFile(`test/fixtures/${name}`));
// Self-signed test pairs (openssl, 100 years): RSA with a PKCS#1 key as kubeadm writes them, EC with a SEC1 key.
const rsa = { certData: base64(fixture("client-rsa.crt")), keyData: base64(fixture("client-rsa.key")) };
const ec = { certData: base64(fixture("client-ec.crt")), keyData: base64(fixture("client-ec.key")) };

describe("kube/checkTlsSettings", () => {
  it("refuses client certificate data that is not PEM, naming the user and OpenSSL's reason", () => {
    const user: User = { name: "ops", certData: base64("not a certificate"), keyData: base64("not a key") };
    expect(() => checkTlsSettings(cluster, user, true)).to.throw(
      /^kubeconfig user "ops": its client certificate and key cannot be used: .*no start line.*\(ERR_OSSL_PEM_NO_START_LINE\)$/,
    );
  });

  it("passes a certificate and its key, RSA or EC, inline or from files, a chain after the certificate included", () => {
    expect(() => checkTlsSettings(cluster, { name: "rsa", ...rsa }, true)).to.not.throw();
    expect(() => checkTlsSettings(cluster, { name: "ec", ...ec }, true)).to.not.throw();
    const files: User = {
      name: "files",
      certFile: repositoryFile("test/fixtures/client-rsa.crt"),
      keyFile: repositoryFile("test/fixtures/client-rsa.key"),
    };
    expect(() => checkTlsSettings(cluster, files, true)).to.not.throw();
    const chain = base64(Buffer.concat([fixture("client-ec.crt"), fixture("wrong-ca.crt")]));
    expect(() => checkTlsSettings(cluster, { name: "chain", ...ec, certData: chain }, true)).to.not.throw();
  });

  it("refuses a key that is not the certificate's", () => {
    const user: User = { name: "ops", certData: rsa.certData, keyData: ec.keyData };
    expect(() => checkTlsSettings(cluster, user, true)).to.throw(
      /^kubeconfig user "ops": its client certificate and key cannot be used: the key is not the certificate's$/,
    );
  });

  it("passes a user with a token, or with a certificate alone, and anything for a plain-HTTP server", () => {
    expect(() => checkTlsSettings(cluster, { name: "t", token: "x" }, true)).to.not.throw();
    expect(() => checkTlsSettings(cluster, { name: "c", certData: rsa.certData }, true)).to.not.throw();
    expect(() => checkTlsSettings(cluster, null, true)).to.not.throw();
    const user: User = { name: "ops", certData: base64("not a certificate") };
    expect(() => checkTlsSettings({ ...cluster, skipTLSVerify: true, caData: "Q0EK" }, user, false)).to.not.throw();
  });

  it("refuses a certificate authority together with insecure-skip-tls-verify, as kubectl does", () => {
    expect(() => checkTlsSettings({ ...cluster, skipTLSVerify: true, caData: "Q0EK" }, null, true)).to.throw(
      'kubeconfig cluster "c": insecure-skip-tls-verify is set together with a certificate-authority-data: verify the server or do not, not both',
    );
    expect(() => checkTlsSettings({ ...cluster, skipTLSVerify: true, caFile: "/etc/ca.crt" }, null, true)).to.throw(
      "insecure-skip-tls-verify is set together with a certificate-authority (/etc/ca.crt)",
    );
    expect(() => checkTlsSettings({ ...cluster, skipTLSVerify: true }, null, true)).to.not.throw();
  });
});
