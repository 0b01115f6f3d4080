// An exec-plugin user as kubectl runs it: a relative command against its kubeconfig's directory, KUBERNETES_EXEC_INFO
// with interactive false (and the cluster with provideClusterInfo), interactiveMode Always refused.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Cluster, User } from "@kubernetes/client-node";
import { expect } from "chai";
import { resolveExecCommand, withExecInfo } from "../../../src/kube/exec-plugin-setup.js";
import { ownedTempDir } from "../../harness/owned-dirs.js";

const V1 = "client.authentication.k8s.io/v1";
const cluster: Cluster = { name: "c", server: "https://10.0.0.1:6443", skipTLSVerify: false, caData: "Q0EK" };
const execUser = (exec: Record<string, unknown>): User => ({
  name: "u",
  exec: { apiVersion: V1, command: "p", ...exec },
});

/** The env the plugin gets, as a map, and its KUBERNETES_EXEC_INFO parsed. */
function envOf(user: User): { env: Map<string, string>; info: { apiVersion: string; kind: string; spec: object } } {
  const entries = (user.exec as { env: { name: string; value: string }[] }).env;
  const env = new Map(entries.map(({ name, value }) => [name, value]));
  return { env, info: JSON.parse(env.get("KUBERNETES_EXEC_INFO") ?? "null") };
}

describe("kube/exec-plugin-setup", () => {
  it("resolveExecCommand: a command with a path separator is relative to the kubeconfig's directory", () => {
    const at = "/home/jane/.kube/config";
    const command = (user: User) => (user.exec as { command: string }).command;
    expect(command(resolveExecCommand(execUser({ command: "./bin/plugin" }), at))).to.equal(
      "/home/jane/.kube/bin/plugin",
    );
    expect(command(resolveExecCommand(execUser({ command: "../plugin" }), at))).to.equal("/home/jane/plugin");
    // A bare name is looked up on PATH; an absolute path is kept; a user without exec is untouched.
    expect(command(resolveExecCommand(execUser({ command: "aws" }), at))).to.equal("aws");
    expect(command(resolveExecCommand(execUser({ command: "/usr/bin/aws" }), at))).to.equal("/usr/bin/aws");
    const tokenUser: User = { name: "t", token: "x" };
    expect(resolveExecCommand(tokenUser, at)).to.equal(tokenUser);
  });

  it("withExecInfo: tells the plugin it cannot ask anything, and nothing of the cluster unless asked to", () => {
    const { env, info } = envOf(withExecInfo(execUser({ env: [{ name: "AWS_PROFILE", value: "prod" }] }), cluster));
    expect(env.get("AWS_PROFILE")).to.equal("prod");
    expect(info).to.deep.equal({ apiVersion: V1, kind: "ExecCredential", spec: { interactive: false } });
  });

  it("withExecInfo: with provideClusterInfo, the cluster as the ExecCredential reference names its fields", () => {
    const { info } = envOf(
      withExecInfo(execUser({ provideClusterInfo: true }), {
        ...cluster,
        tlsServerName: "api.internal",
        skipTLSVerify: true,
      }),
    );
    expect(info.spec).to.deep.equal({
      interactive: false,
      cluster: {
        server: "https://10.0.0.1:6443",
        "tls-server-name": "api.internal",
        "insecure-skip-tls-verify": true,
        "certificate-authority-data": "Q0EK",
      },
    });
  });

  it("withExecInfo: a CA file is passed as data, and one that cannot be read is named", () => {
    const dir = ownedTempDir("cni-repair-exec-info-");
    const ca = join(dir, "ca.crt");
    writeFileSync(ca, "-----BEGIN CERTIFICATE-----\n");
    const { caData: _, ...withoutData } = cluster;
    const fromFile = envOf(withExecInfo(execUser({ provideClusterInfo: true }), { ...withoutData, caFile: ca }));
    expect(fromFile.info.spec).to.deep.include({
      cluster: {
        server: cluster.server,
        "certificate-authority-data": Buffer.from("-----BEGIN CERTIFICATE-----\n").toString("base64"),
      },
    });
    const gone = join(dir, "gone.crt");
    expect(() => withExecInfo(execUser({ provideClusterInfo: true }), { ...withoutData, caFile: gone })).to.throw(
      `kubeconfig cluster "c" certificate-authority file "${gone}" cannot be read: ENOENT`,
    );
  });

  it("withExecInfo: its KUBERNETES_EXEC_INFO replaces one the kubeconfig sets, and v1alpha1 gets no cluster", () => {
    const user = execUser({
      apiVersion: "client.authentication.k8s.io/v1alpha1",
      provideClusterInfo: true,
      env: [{ name: "KUBERNETES_EXEC_INFO", value: "{}" }],
    });
    const { env, info } = envOf(withExecInfo(user, cluster));
    expect(env.size).to.equal(1);
    expect(info.spec).to.deep.equal({ interactive: false });
  });

  it("withExecInfo: refuses an exec block without a command, naming the user", () => {
    for (const command of [undefined, "", " "]) {
      expect(() => withExecInfo(execUser({ command }), cluster)).to.throw(
        'kubeconfig user "u": its exec block has no command',
      );
    }
  });

  it("withExecInfo: refuses interactiveMode Always, naming the user; a user without exec is untouched", () => {
    expect(() => withExecInfo(execUser({ interactiveMode: "Always" }), cluster)).to.throw(
      'kubeconfig user "u": its exec plugin\'s interactiveMode is Always, and a controller has no terminal',
    );
    expect(() => withExecInfo(execUser({ interactiveMode: "IfAvailable" }), cluster)).to.not.throw();
    const tokenUser: User = { name: "t", token: "x" };
    expect(withExecInfo(tokenUser, cluster)).to.equal(tokenUser);
  });
});
