// An exec-plugin user set up the way kubectl runs its plugin, where client-node does less (it spawns the command with
// the kubeconfig's env and nothing else):
// - a command with a path separator in it is relative to its kubeconfig file's directory, not to the working
//   directory (a bare name is looked up on PATH);
// - the plugin is told in KUBERNETES_EXEC_INFO that no one can answer it (spec.interactive false) and, with
//   provideClusterInfo, which cluster it is for (spec.cluster: Pinniped and other per-cluster plugins need it);
// - interactiveMode Always can never work in a controller, and an exec block without a command never works at all:
//   both are refused at once instead of failing at each refresh.
// Facts from the client.authentication.k8s.io ExecCredential reference (kubernetes.io, "Client Authentication (v1)").
import { readFileSync } from "node:fs";
import { dirname, isAbsolute, resolve, sep } from "node:path";
import type { Cluster, User } from "@kubernetes/client-node";
import { messageOf } from "../util/message-of.js";

/** The kubeconfig's exec block, as client-node keeps it (the YAML object as written). */
type ExecBlock = {
  readonly apiVersion?: unknown;
  readonly command?: unknown;
  readonly env?: unknown;
  readonly provideClusterInfo?: unknown;
  readonly interactiveMode?: unknown;
};

const EXEC_INFO = "KUBERNETES_EXEC_INFO";
/** The first ExecCredential version, which has no spec.cluster (client-go dropped it in 1.24). */
const V1ALPHA1 = "client.authentication.k8s.io/v1alpha1";

const execOf = (user: User): ExecBlock | undefined =>
  typeof user.exec === "object" && user.exec !== null ? (user.exec as ExecBlock) : undefined;

/** The user with its exec command made absolute against the kubeconfig file it came from, when it is a relative path. */
export function resolveExecCommand(user: User, kubeconfigFile: string): User {
  const exec = execOf(user);
  const command = exec?.command;
  if (typeof command !== "string" || !command.includes(sep) || isAbsolute(command)) return user;
  return { ...user, exec: { ...exec, command: resolve(dirname(kubeconfigFile), command) } };
}

/**
 * The user as its plugin must run for `cluster`: KUBERNETES_EXEC_INFO after the kubeconfig's own env (so it wins, as
 * with kubectl). Throws for an exec block without a command, or with interactiveMode Always, naming the user. A user
 * without exec is returned as it is.
 */
export function withExecInfo(user: User, cluster: Cluster): User {
  const exec = execOf(user);
  if (!exec) return user;
  if (typeof exec.command !== "string" || exec.command.trim() === "") {
    throw new Error(`kubeconfig user "${user.name}": its exec block has no command`);
  }
  if (exec.interactiveMode === "Always") {
    throw new Error(
      `kubeconfig user "${user.name}": its exec plugin's interactiveMode is Always, and a controller has no terminal ` +
        "to answer it: use a plugin or mode that needs no input (IfAvailable or Never)",
    );
  }
  const env = Array.isArray(exec.env) ? exec.env.filter((entry) => entry?.name !== EXEC_INFO) : [];
  return {
    ...user,
    exec: { ...exec, env: [...env, { name: EXEC_INFO, value: JSON.stringify(execInfo(exec, cluster)) }] },
  };
}

function execInfo(exec: ExecBlock, cluster: Cluster): object {
  const apiVersion = typeof exec.apiVersion === "string" ? exec.apiVersion : "client.authentication.k8s.io/v1";
  const withCluster = exec.provideClusterInfo === true && apiVersion !== V1ALPHA1;
  return {
    apiVersion,
    kind: "ExecCredential",
    spec: { interactive: false, ...(withCluster && { cluster: clusterInfo(cluster) }) },
  };
}

/** spec.cluster: the kubeconfig's cluster, its CA as data (a CA file is read; []byte is base64 in JSON). */
function clusterInfo(cluster: Cluster): Record<string, unknown> {
  const caData = cluster.caData ?? (cluster.caFile ? readCa(cluster.name, cluster.caFile) : undefined);
  return {
    server: cluster.server,
    ...(cluster.tlsServerName && { "tls-server-name": cluster.tlsServerName }),
    ...(cluster.skipTLSVerify && { "insecure-skip-tls-verify": true }),
    ...(caData && { "certificate-authority-data": caData }),
    ...(cluster.proxyUrl && { "proxy-url": cluster.proxyUrl }),
  };
}

function readCa(clusterName: string, file: string): string {
  try {
    return readFileSync(file).toString("base64");
  } catch (error) {
    throw new Error(
      `kubeconfig cluster "${clusterName}" certificate-authority file "${file}" cannot be read: ${messageOf(error)}`,
      {
        cause: error,
      },
    );
  }
}
