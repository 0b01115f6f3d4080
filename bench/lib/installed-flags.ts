// The Node flags the shipped manifests (generated from the chart) start cni-repair with, per mode: the workload
// command's flags before the script, then NODE_OPTIONS. Read from manifests/, so the bench measures what installs.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type KubernetesObject, loadAllYaml } from "@kubernetes/client-node";
import { controllerContainer, manifestsDir, type Overlay, podCommand } from "../../test/harness/overlays.js";

const PLACEMENT = { namespace: "cni-repair", nodeName: "bench-node", podName: "cni-repair-bench" };

export function installedNodeFlags(overlay: Overlay): string[] {
  const yaml = readFileSync(join(manifestsDir(), "overlays", overlay, "cni-repair.yaml"), "utf8");
  const container = controllerContainer({ overlay, yaml, objects: loadAllYaml(yaml) as KubernetesObject[] });
  const { env, nodeFlags } = podCommand(container, PLACEMENT);
  return [...nodeFlags, ...(env.NODE_OPTIONS ?? "").split(" ").filter((flag) => flag !== "")];
}
