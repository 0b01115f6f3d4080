// Finding the credentials: KUBECONFIG merged as kubectl merges it, and files that are not kubeconfigs named.
import { writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { expect } from "chai";
import { type ConnectionSettings, kubeconfigFiles } from "../../../src/kube/connect.js";
import { loadKubeConfig as loadFiles } from "../../../src/kube/kubeconfig-files.js";
import { ownedTempDir } from "../../harness/owned-dirs.js";

/** What loadCredentials does with kubeconfig files, synchronously: the merged KubeConfig and its source. */
function loadKubeConfig(settings: ConnectionSettings, env: NodeJS.ProcessEnv) {
  const found = kubeconfigFiles(settings, env);
  if (!found) throw new Error("no kubeconfig found");
  return { config: loadFiles(found, settings.context), source: found.source };
}

type Doc = { clusters?: string[]; users?: string[]; contexts?: [string, string][]; current?: string; server?: string };

describe("kube/connect kubeconfig files", () => {
  let dir: string;
  beforeEach(() => {
    dir = ownedTempDir("cni-repair-connect-");
  });

  /** A kubeconfig file; every cluster gets `server`, every context is [name, cluster] with user u. */
  const file = (name: string, doc: Doc): string => {
    const path = join(dir, name);
    const server = doc.server ?? `https://${name}.example:6443`;
    writeFileSync(
      path,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: (doc.clusters ?? []).map((cluster) => ({ name: cluster, cluster: { server } })),
        users: (doc.users ?? []).map((user) => ({ name: user, user: { token: `${name}-${user}` } })),
        contexts: (doc.contexts ?? []).map(([context, cluster]) => ({
          name: context,
          context: { cluster, user: "u" },
        })),
        ...(doc.current !== undefined && { "current-context": doc.current }),
      }),
    );
    return path;
  };
  const load = (files: string[], context = "") =>
    loadKubeConfig({ kubeconfig: "", context }, { KUBECONFIG: files.join(delimiter) });

  it("skips a file of KUBECONFIG that does not exist, and says so in the source", () => {
    const a = file("a", { clusters: ["c"], users: ["u"], contexts: [["x", "c"]], current: "x" });
    const missing = join(dir, "missing");
    const { config, source } = load([missing, a]);
    expect(config.getCurrentCluster()?.server).to.equal("https://a.example:6443");
    expect(source).to.equal(`KUBECONFIG=${a} (skipped, missing: ${missing})`);
  });

  it("fails when no file of KUBECONFIG exists, naming them", () => {
    expect(() => load([join(dir, "m1"), join(dir, "m2")])).to.throw(`no file in KUBECONFIG exists: ${join(dir, "m1")}`);
  });

  it("the first file wins for each cluster, user and context name, and for current-context", () => {
    const a = file("a", { clusters: ["shared"], users: ["u"], contexts: [["x", "shared"]], current: "x" });
    const b = file("b", {
      clusters: ["shared", "only-b"],
      users: ["u"],
      contexts: [
        ["x", "only-b"],
        ["y", "only-b"],
      ],
      current: "y",
    });
    const { config } = load([a, b]);
    expect(config.getCurrentContext()).to.equal("x");
    expect(config.getCurrentCluster()?.server).to.equal("https://a.example:6443");
    expect(config.getCurrentUser()?.token).to.equal("a-u");
    expect(config.getContexts().map((context) => context.name)).to.deep.equal(["x", "y"]);
    expect(config.getClusters().map((cluster) => cluster.name)).to.deep.equal(["shared", "only-b"]);
    // A later file's context still works with --context.
    expect(load([a, b], "y").config.getCurrentCluster()?.server).to.equal("https://b.example:6443");
  });

  it("takes current-context from a later file when the first sets none", () => {
    const a = file("a", { clusters: ["c"], users: ["u"], contexts: [["x", "c"]] });
    const b = file("b", { current: "x" });
    expect(load([a, b]).config.getCurrentContext()).to.equal("x");
  });

  it("names a file that is not a kubeconfig (/etc/passwd-like text)", () => {
    const passwd = join(dir, "passwd");
    writeFileSync(passwd, "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n");
    const run = () => loadKubeConfig({ kubeconfig: passwd, context: "" }, {});
    expect(run).to.throw(`--kubeconfig file "${passwd}" is not a kubeconfig`);
    expect(run).not.to.throw(/undefined/);
  });

  it("says there is no current-context rather than naming an undefined one", () => {
    const a = file("a", { clusters: ["c"], users: ["u"], contexts: [["x", "c"]] });
    expect(() => load([a])).to.throw("KUBECONFIG sets no current-context: pass --context (contexts: x)");
    expect(load([a], "x").config.getCurrentContext()).to.equal("x");
  });

  it("names a current-context that no file defines", () => {
    const a = file("a", { clusters: ["c"], users: ["u"], contexts: [["x", "c"]], current: "gone" });
    expect(() => load([a])).to.throw('KUBECONFIG: current-context "gone" is not defined');
  });

  it("names a user the current context names and no file defines; a context naming none is anonymous", () => {
    const a = file("a", { clusters: ["c"], users: ["admin"], contexts: [["x", "c"]], current: "x" });
    expect(() => load([a])).to.throw(
      'KUBECONFIG: current context "x" names user "u", which is not defined (users: admin)',
    );
    // Defined in a later file of KUBECONFIG: found, as kubectl finds it.
    const b = file("b", { users: ["u"] });
    expect(load([a, b]).config.getCurrentUser()?.name).to.equal("u");
    const anonymous = join(dir, "anonymous");
    writeFileSync(
      anonymous,
      JSON.stringify({
        clusters: [{ name: "c", cluster: { server: "http://127.0.0.1:8001" } }],
        contexts: [{ name: "proxy", context: { cluster: "c" } }],
        "current-context": "proxy",
      }),
    );
    expect(load([anonymous]).config.getCurrentUser()).to.equal(null);
  });

  it("still refuses a --kubeconfig that does not exist", () => {
    const path = join(dir, "nope");
    expect(() => loadKubeConfig({ kubeconfig: path, context: "" }, {})).to.throw(
      `--kubeconfig file "${path}" does not exist`,
    );
  });
});
