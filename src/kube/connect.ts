// Finds the cluster credentials: --kubeconfig/--context, else KUBECONFIG, else ~/.kube/config, else in-cluster.
// In cluster nothing here loads @kubernetes/client-node; a kubeconfig loads it on demand (exec plugins, OIDC, …).
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import type { ClusterCredentials } from "./cluster-credentials.js";
import { inClusterCredentials, inClusterTokenPath } from "./in-cluster.js";
import type { KubeconfigFiles } from "./kubeconfig-files.js";

export type ConnectionSettings = { readonly kubeconfig: string; readonly context: string };

export type LoadedCredentials = {
  readonly credentials: ClusterCredentials;
  /** Where the credentials came from, for the startup log. */
  readonly source: string;
  /** Loads them afresh (re-reads token files, re-runs exec plugins): for after a 401. */
  readonly reload: () => ClusterCredentials;
};

export async function loadCredentials(
  settings: ConnectionSettings,
  env: NodeJS.ProcessEnv = process.env,
): Promise<LoadedCredentials> {
  const found = kubeconfigFiles(settings, env);
  if (found) {
    const [{ loadKubeConfig }, { KubeConfigCredentials }] = await Promise.all([
      import("./kubeconfig-files.js"),
      import("./kubeconfig-credentials.js"),
    ]);
    const load = () => new KubeConfigCredentials(loadKubeConfig(found, settings.context));
    const credentials = load();
    credentials.check();
    return { credentials, source: found.source, reload: load };
  }
  const inCluster = inClusterCredentials(env);
  if (inCluster) {
    if (settings.context) throw new Error(`--context "${settings.context}" given, but no kubeconfig was found`);
    return {
      credentials: inCluster,
      source: `in-cluster service account (${inCluster.dir})`,
      reload: () => inClusterCredentials(env) ?? inCluster,
    };
  }
  throw new Error(
    "no Kubernetes credentials found: pass --kubeconfig, set KUBECONFIG, create ~/.kube/config, " +
      `or run in a pod (KUBERNETES_SERVICE_HOST/PORT and ${inClusterTokenPath(env)})`,
  );
}

/** The kubeconfig files to use, as kubectl finds them; undefined when there are none (then in-cluster). */
export function kubeconfigFiles(settings: ConnectionSettings, env: NodeJS.ProcessEnv): KubeconfigFiles | undefined {
  if (settings.kubeconfig) {
    if (!existsSync(settings.kubeconfig)) throw new Error(`--kubeconfig file "${settings.kubeconfig}" does not exist`);
    return { files: [settings.kubeconfig], origin: "--kubeconfig", source: `--kubeconfig=${settings.kubeconfig}` };
  }
  const listed = (env.KUBECONFIG ?? "").split(delimiter).filter((file) => file !== "");
  if (listed.length > 0) {
    // As kubectl: files in KUBECONFIG that do not exist are skipped; none existing is an error.
    const files = listed.filter((file) => existsSync(file));
    if (files.length === 0) throw new Error(`no file in KUBECONFIG exists: ${listed.join(delimiter)}`);
    const missing = listed.filter((file) => !files.includes(file));
    const skipped = missing.length > 0 ? ` (skipped, missing: ${missing.join(delimiter)})` : "";
    return { files, origin: "KUBECONFIG", source: `KUBECONFIG=${files.join(delimiter)}${skipped}` };
  }
  const home = join(env.HOME || homedir(), ".kube", "config");
  return existsSync(home) ? { files: [home], origin: home, source: home } : undefined;
}
