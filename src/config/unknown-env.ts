// Refuses CNI_REPAIR_* environment variables that no flag reads: a misspelt limit must not silently fall back to
// its default. Kubernetes' service links of a Service named cni-repair-… (service-links.ts) are not ours: ignored.
import { ConfigError } from "./config-error.js";
import { closestName } from "./did-you-mean.js";
import { serviceLinkNames } from "./service-links.js";

const PREFIX = "CNI_REPAIR_";

/**
 * Read by something other than a flag: the in-cluster path prefix (src/kube/connect.ts), and the build and test
 * tooling (control plane and kwok binaries, their cache), whose environment a controller started by it inherits.
 */
export const INTERNAL_ENV_VARS: readonly string[] = [
  "CNI_REPAIR_IN_CLUSTER_ROOT",
  "CNI_REPAIR_CONTROLPLANE_BIN",
  "CNI_REPAIR_KWOK_BIN",
  "CNI_REPAIR_CACHE",
];

/** Throws ConfigError for the first unknown CNI_REPAIR_* variable (not a service link), naming the known one closest to it. */
export function rejectUnknownEnv(env: Record<string, string | undefined>, flagEnvVars: readonly string[]): void {
  const known = new Set([...flagEnvVars, ...INTERNAL_ENV_VARS]);
  const links = serviceLinkNames(env);
  const unknown = Object.keys(env)
    .filter((name) => name.startsWith(PREFIX) && !known.has(name) && !links.has(name))
    .sort();
  const first = unknown[0];
  if (first === undefined) return;
  throw new ConfigError(
    `unknown environment variable ${first} (did you mean ${closestName(first, [...known])}?)` +
      (unknown.length > 1 ? `; also unknown: ${unknown.slice(1).join(", ")}` : ""),
  );
}
