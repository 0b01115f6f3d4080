// A kubeconfig's server: https:// and http:// (kubectl proxy) work as with kubectl, no scheme means https://, any
// other scheme is refused at once, naming it.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { expect } from "chai";
import { KubeConfigCredentials, serverUrl } from "../../../src/kube/kubeconfig-credentials.js";
import { ownedTempDir } from "../../harness/owned-dirs.js";

function credentialsFor(
  server: string,
  files: { caFile?: string; certFile?: string; keyFile?: string } = {},
): KubeConfigCredentials {
  const { caFile, ...userFiles } = files;
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: "c", server, skipTLSVerify: false, ...(caFile && { caFile }) }],
    users: [{ name: "u", token: "t0ken", ...userFiles }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x",
  });
  return new KubeConfigCredentials(config);
}

describe("kube/kubeconfig-credentials", () => {
  it("serverUrl: https and http kept, no scheme is https, trailing slashes dropped", () => {
    expect(serverUrl("c", "https://10.0.0.1:6443/")).to.equal("https://10.0.0.1:6443");
    expect(serverUrl("c", "http://127.0.0.1:8001")).to.equal("http://127.0.0.1:8001");
    expect(serverUrl("c", "HTTP://127.0.0.1:8001")).to.equal("http://127.0.0.1:8001");
    expect(serverUrl("c", "api.example.com:6443")).to.equal("https://api.example.com:6443");
  });

  it("serverUrl: refuses another scheme or no URL at all, naming the cluster and the server", () => {
    expect(() => serverUrl("c", "ftp://10.0.0.1")).to.throw(
      'kubeconfig cluster "c": server "ftp://10.0.0.1" has scheme ftp, expected https or http',
    );
    expect(() => serverUrl("c", "unix:///var/run/k8s.sock")).to.throw("has scheme unix, expected https or http");
    expect(() => serverUrl("c", "https://[::1")).to.throw('kubeconfig cluster "c": server "https://[::1" is not a URL');
    // "https://" as client-node leaves it (one trailing slash gone): not a server called "https".
    expect(() => serverUrl("c", "https:/")).to.throw('kubeconfig cluster "c": server "https:/" is not a URL');
    expect(() => serverUrl("c", "http:/10.0.0.1")).to.throw("is not a URL");
  });

  it("authenticates against a plain-HTTP server with the user's token and no TLS", async () => {
    const credentials = credentialsFor("http://127.0.0.1:8001");
    expect(credentials.server).to.equal("http://127.0.0.1:8001");
    const { headers } = await credentials.authenticate();
    expect(headers.authorization).to.equal("Bearer t0ken");
  });

  it("still authenticates against an https server with TLS verification on", async () => {
    const { headers, tls } = await credentialsFor("https://127.0.0.1:6443").authenticate();
    expect(headers.authorization).to.equal("Bearer t0ken");
    expect(tls.rejectUnauthorized).to.not.equal(false);
  });

  it("check: names the first TLS file that cannot be read; passes when all can", () => {
    const dir = ownedTempDir("cni-repair-tls-files-");
    const ca = join(dir, "ca.crt");
    writeFileSync(ca, "x");
    expect(() => credentialsFor("https://127.0.0.1:6443", { caFile: ca }).check()).to.not.throw();
    expect(() => credentialsFor("https://127.0.0.1:6443", { caFile: join(dir, "gone.crt") }).check()).to.throw(
      `kubeconfig cluster "c" certificate-authority file "${join(dir, "gone.crt")}" cannot be read: ENOENT`,
    );
    expect(() =>
      credentialsFor("https://127.0.0.1:6443", { caFile: ca, keyFile: join(dir, "gone.key") }).check(),
    ).to.throw(`kubeconfig user "u" client-key file "${join(dir, "gone.key")}" cannot be read`);
  });
});
