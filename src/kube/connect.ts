// Finds the cluster credentials: --kubeconfig/--context, else KUBECONFIG, else ~/.kube/config, else in-cluster.
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import { type Cluster, type Context, KubeConfig, type User } from "@kubernetes/client-node";
import { messageOf } from "../util/message-of.js";

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
  if (settings.kubeconfig) {
    if (!existsSync(settings.kubeconfig)) throw new Error(`--kubeconfig file "${settings.kubeconfig}" does not exist`);
    const config = mergeFiles([settings.kubeconfig], "--kubeconfig");
    return {
      config: withContext(config, settings.context, "--kubeconfig"),
      source: `--kubeconfig=${settings.kubeconfig}`,
    };
  }
  const listed = (env.KUBECONFIG ?? "").split(delimiter).filter((file) => file !== "");
  if (listed.length > 0) {
    // As kubectl: files in KUBECONFIG that do not exist are skipped; none existing is an error.
    const files = listed.filter((file) => existsSync(file));
    if (files.length === 0) throw new Error(`no file in KUBECONFIG exists: ${listed.join(delimiter)}`);
    const missing = listed.filter((file) => !files.includes(file));
    const config = mergeFiles(files, "KUBECONFIG");
    const skipped = missing.length > 0 ? ` (skipped, missing: ${missing.join(delimiter)})` : "";
    return {
      config: withContext(config, settings.context, "KUBECONFIG"),
      source: `KUBECONFIG=${files.join(delimiter)}${skipped}`,
    };
  }
  const home = join(homedir(), ".kube", "config");
  if (existsSync(home)) {
    return { config: withContext(mergeFiles([home], home), settings.context, home), source: home };
  }
  const root = env.CNI_REPAIR_IN_CLUSTER_ROOT ?? "";
  const token = join(root, SERVICE_ACCOUNT_DIR, "token");
  if (env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT && existsSync(token)) {
    if (settings.context) throw new Error(`--context "${settings.context}" given, but no kubeconfig was found`);
    const config = new KubeConfig();
    config.loadFromCluster(root);
    return { config, source: `in-cluster service account (${join(root, SERVICE_ACCOUNT_DIR)})` };
  }
  throw new Error(
    "no Kubernetes credentials found: pass --kubeconfig, set KUBECONFIG, create ~/.kube/config, " +
      `or run in a pod (KUBERNETES_SERVICE_HOST/PORT and ${token})`,
  );
}

/**
 * Merges kubeconfig files the way kubectl does: for each cluster, user and context name the first file that
 * defines it wins, and so does the first non-empty current-context. (client-node's own merge throws on a name
 * defined twice and lets later files change the current context.)
 */
function mergeFiles(files: readonly string[], origin: string): KubeConfig {
  const clusters: Cluster[] = [];
  const users: User[] = [];
  const contexts: Context[] = [];
  let currentContext = "";
  for (const file of files) {
    const next = readKubeconfigFile(file, origin);
    addNew(clusters, next.clusters);
    addNew(users, next.users);
    addNew(contexts, next.contexts);
    currentContext ||= next.getCurrentContext() ?? "";
  }
  const merged = new KubeConfig();
  merged.loadFromOptions({ clusters, users, contexts, currentContext });
  return merged;
}

function readKubeconfigFile(file: string, origin: string): KubeConfig {
  const config = new KubeConfig();
  try {
    config.loadFromFile(file);
  } catch (error) {
    throw new Error(`${origin} file "${file}" is not a valid kubeconfig: ${messageOf(error)}`, {
      cause: error,
    });
  }
  // Any YAML loads (a plain text file is one YAML string): a file that defines nothing is not a kubeconfig.
  const empty = config.clusters.length + config.users.length + config.contexts.length === 0;
  if (empty && !config.getCurrentContext()) {
    throw new Error(
      `${origin} file "${file}" is not a kubeconfig: it has no clusters, users, contexts or current-context`,
    );
  }
  return config;
}

function addNew<T extends { readonly name: string }>(into: T[], from: readonly T[]): void {
  for (const item of from) if (!into.some((known) => known.name === item.name)) into.push(item);
}

function withContext(config: KubeConfig, context: string, origin: string): KubeConfig {
  if (context) {
    if (!config.getContextObject(context)) {
      const known = config.getContexts().map((c) => c.name);
      throw new Error(`--context "${context}" is not in ${origin} (contexts: ${known.join(", ") || "none"})`);
    }
    config.setCurrentContext(context);
  }
  const current = config.getCurrentContext();
  if (!current) {
    const known = config.getContexts().map((c) => c.name);
    throw new Error(`${origin} sets no current-context: pass --context (contexts: ${known.join(", ") || "none"})`);
  }
  if (!config.getContextObject(current)) throw new Error(`${origin}: current-context "${current}" is not defined`);
  if (!config.getCurrentCluster()) throw new Error(`${origin}: current context "${current}" names no cluster`);
  return config;
}
