// In-cluster credentials read from the mounted service-account files, with no kubeconfig and no client-node.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { loadCredentials } from "../../../src/kube/connect.js";
import { InClusterCredentials, inClusterCredentials, SERVICE_ACCOUNT_DIR } from "../../../src/kube/in-cluster.js";
import { ownedTempDir } from "../../harness/owned-dirs.js";

describe("kube/in-cluster credentials", () => {
  let root: string;
  let dir: string;
  const env = () => ({
    CNI_REPAIR_IN_CLUSTER_ROOT: root,
    KUBERNETES_SERVICE_HOST: "10.96.0.1",
    KUBERNETES_SERVICE_PORT: "443",
    HOME: join(root, "home"),
  });
  beforeEach(() => {
    root = ownedTempDir("cni-repair-in-cluster-unit-");
    dir = join(root, SERVICE_ACCOUNT_DIR);
    mkdirSync(dir, { recursive: true });
    mkdirSync(join(root, "home"));
    writeFileSync(join(dir, "token"), "first-token\n");
    writeFileSync(join(dir, "ca.crt"), "CA PEM");
    writeFileSync(join(dir, "namespace"), "mesh-system");
  });

  it("connects to KUBERNETES_SERVICE_HOST/PORT with the CA, the token and the namespace of the mounted files", async () => {
    const credentials = inClusterCredentials(env());
    expect(credentials?.server).to.equal("https://10.96.0.1:443");
    expect(credentials?.namespace).to.equal("mesh-system");
    const auth = await credentials?.authenticate();
    expect(auth?.headers).to.deep.equal({ authorization: "Bearer first-token" });
    expect(String(auth?.tls.ca)).to.equal("CA PEM");
  });

  it("reads the token file at every call, so a token the kubelet rotated is used", async () => {
    const credentials = inClusterCredentials(env());
    writeFileSync(join(dir, "token"), "rotated-token");
    expect((await credentials?.authenticate())?.headers.authorization).to.equal("Bearer rotated-token");
  });

  it("brackets an IPv6 service address", () => {
    expect(new InClusterCredentials(dir, "fd00::1", "443").server).to.equal("https://[fd00::1]:443");
  });

  it("refuses a service port or host that cannot make a URL, naming the variable and its value", () => {
    for (const port of ["abc", "0", "65536", "443x", "-1"]) {
      expect(() => inClusterCredentials({ ...env(), KUBERNETES_SERVICE_PORT: port })).to.throw(
        `KUBERNETES_SERVICE_PORT "${port}" is not a port number (1-65535)`,
      );
    }
    expect(() => inClusterCredentials({ ...env(), KUBERNETES_SERVICE_HOST: "10.96.0.1/x y" })).to.throw(
      'KUBERNETES_SERVICE_HOST "10.96.0.1/x y" is not a host name or IP address',
    );
    expect(inClusterCredentials({ ...env(), KUBERNETES_SERVICE_PORT: "6443" })?.server).to.equal(
      "https://10.96.0.1:6443",
    );
  });

  it("is not there without the environment variables or the token file", () => {
    expect(inClusterCredentials({ ...env(), KUBERNETES_SERVICE_HOST: "" })).to.equal(undefined);
    expect(inClusterCredentials({ ...env(), CNI_REPAIR_IN_CLUSTER_ROOT: join(root, "elsewhere") })).to.equal(undefined);
  });

  it("describes the token file and CA, never the token", () => {
    const described = inClusterCredentials(env())?.describe();
    expect(described?.user).to.equal(`the in-cluster service account (token file ${join(dir, "token")})`);
    expect(described?.ca).to.equal(`CA file ${join(dir, "ca.crt")}`);
    expect(JSON.stringify(described)).not.to.include("first-token");
  });

  it("loadCredentials picks them when no kubeconfig exists, and refuses --context with them", async () => {
    const loaded = await loadCredentials({ kubeconfig: "", context: "" }, env());
    expect(loaded.source).to.equal(`in-cluster service account (${dir})`);
    expect(loaded.credentials.server).to.equal("https://10.96.0.1:443");
    await loadCredentials({ kubeconfig: "", context: "x" }, env()).then(
      () => expect.fail("--context was accepted"),
      (error: Error) => expect(error.message).to.equal('--context "x" given, but no kubeconfig was found'),
    );
  });
});
