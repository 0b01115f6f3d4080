// Loads and merges kubeconfig files as kubectl does, and picks the context. This module imports
// @kubernetes/client-node, so it is only ever loaded (dynamically) when a kubeconfig is used.
import { type Cluster, type Context, KubeConfig, type User } from "@kubernetes/client-node";
import { messageOf } from "../util/message-of.js";
import { resolveExecCommand } from "./exec-plugin-setup.js";

/** The kubeconfig files to merge, in order, and how the user named them (for messages). */
export type KubeconfigFiles = { readonly files: readonly string[]; readonly origin: string; readonly source: string };

/** The merged files with the context chosen (--context, else the first current-context) and checked. */
export function loadKubeConfig(found: KubeconfigFiles, context: string): KubeConfig {
  return withContext(mergeFiles(found.files, found.origin), context, found.origin);
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
  // As kubectl: a relative exec command is relative to the file that names it (client-node leaves it to the cwd).
  config.users = config.users.map((user) => resolveExecCommand(user, file));
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
  // As kubectl: a user named but defined nowhere is a mistake, not a wish to be anonymous (a context naming no user is).
  const user = config.getContextObject(current)?.user;
  if (user && !config.getUser(user)) {
    const known = config.getUsers().map((u) => u.name);
    throw new Error(
      `${origin}: current context "${current}" names user "${user}", which is not defined (users: ${known.join(", ") || "none"})`,
    );
  }
  return config;
}
