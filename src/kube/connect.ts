// Finds the cluster credentials: --kubeconfig/--context, else KUBECONFIG, else ~/.kube/config, else in-cluster.
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";

const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

export type ConnectionSettings = { readonly kubeconfig: string; readonly context: string };

export type LoadedKubeConfig = {
  readonly config: KubeConfig;
  /** Where the credentials came from, for the startup log. */
  readonly source: string;
};

/**
 * `CNI_REPAIR_IN_CLUSTER_ROOT` prefixes the in-cluster paths (token, CA, namespace), so tests can run
 * "in-cluster" against a local API server with a TokenRequest token in a temporary directory.
 */
export function loadKubeConfig(settings: ConnectionSettings, env: NodeJS.ProcessEnv = process.env): LoadedKubeConfig {
  const config = new KubeConfig();
  const files = settings.kubeconfig
    ? [settings.kubeconfig]
    : (env.KUBECONFIG ?? "").split(delimiter).filter((file) => file !== "");
  const origin = settings.kubeconfig ? "--kubeconfig" : "KUBECONFIG";
  if (files.length > 0) {
    for (const file of files) {
      if (!existsSync(file)) throw new Error(`${origin} file "${file}" does not exist`);
    }
    loadFiles(config, files, origin);
    return { config: withContext(config, settings.context, origin), source: `${origin}=${files.join(delimiter)}` };
  }
  const home = join(homedir(), ".kube", "config");
  if (existsSync(home)) {
    loadFiles(config, [home], "~/.kube/config");
    return { config: withContext(config, settings.context, home), source: home };
  }
  const root = env.CNI_REPAIR_IN_CLUSTER_ROOT ?? "";
  const token = join(root, SERVICE_ACCOUNT_DIR, "token");
  if (env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT && existsSync(token)) {
    if (settings.context) throw new Error(`--context "${settings.context}" given, but no kubeconfig was found`);
    config.loadFromCluster(root);
    return { config, source: `in-cluster service account (${join(root, SERVICE_ACCOUNT_DIR)})` };
  }
  throw new Error(
    "no Kubernetes credentials found: pass --kubeconfig, set KUBECONFIG, create ~/.kube/config, " +
      `or run in a pod (KUBERNETES_SERVICE_HOST/PORT and ${token})`,
  );
}

function loadFiles(config: KubeConfig, files: readonly string[], origin: string): void {
  for (const [index, file] of files.entries()) {
    const next = new KubeConfig();
    try {
      next.loadFromFile(file);
    } catch (error) {
      throw new Error(`${origin} file "${file}" is not a valid kubeconfig: ${(error as Error).message}`, {
        cause: error,
      });
    }
    if (index === 0) config.loadFromOptions(next);
    else config.mergeConfig(next, true);
  }
}

function withContext(config: KubeConfig, context: string, origin: string): KubeConfig {
  if (context) {
    if (!config.getContextObject(context)) {
      const known = config.getContexts().map((c) => c.name);
      throw new Error(`--context "${context}" is not in ${origin} (contexts: ${known.join(", ") || "none"})`);
    }
    config.setCurrentContext(context);
  }
  if (!config.getCurrentCluster()) {
    throw new Error(`${origin}: current context "${config.getCurrentContext()}" names no cluster`);
  }
  return config;
}
