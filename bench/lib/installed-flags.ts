// How the shipped manifests (generated from the chart) start cni-repair, per mode: the Node flags (the workload
// command's flags before the script, then NODE_OPTIONS) and the V8 flags the controller sets itself once its
// modules are loaded (CNI_REPAIR_V8_FLAGS, --v8-flags) and once its caches have synced
// (CNI_REPAIR_V8_FLAGS_AFTER_SYNC, --v8-flags-after-sync). Read from manifests/, so the bench measures what installs.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type KubernetesObject, loadAllYaml } from "@kubernetes/client-node";
import { controllerContainer, manifestsDir, type Overlay, podCommand } from "../../test/harness/overlays.js";

const PLACEMENT = { namespace: "cni-repair", nodeName: "bench-node", podName: "cni-repair-bench" };
/** The environment variables of --v8-flags and --v8-flags-after-sync (src/config/flags.ts). */
const V8_FLAGS_ENVS = ["CNI_REPAIR_V8_FLAGS", "CNI_REPAIR_V8_FLAGS_AFTER_SYNC"] as const;

function installedCommand(overlay: Overlay): ReturnType<typeof podCommand> {
  const yaml = readFileSync(join(manifestsDir(), "overlays", overlay, "cni-repair.yaml"), "utf8");
  return podCommand(
    controllerContainer({ overlay, yaml, objects: loadAllYaml(yaml) as KubernetesObject[] }),
    PLACEMENT,
  );
}

export function installedNodeFlags(overlay: Overlay): string[] {
  const { env, nodeFlags } = installedCommand(overlay);
  return [...nodeFlags, ...(env.NODE_OPTIONS ?? "").split(" ").filter((flag) => flag !== "")];
}

/** The manifests' --v8-flags and --v8-flags-after-sync, as the environment variables they set them by. */
export function installedV8FlagsEnv(overlay: Overlay): Record<string, string> {
  const { env } = installedCommand(overlay);
  return Object.fromEntries(V8_FLAGS_ENVS.flatMap((name) => (env[name] === undefined ? [] : [[name, env[name]]])));
}
