// The preset combinations the chart's `presets` value and the kustomize components manifests/presets/<a+b> install,
// and an overlay with one of those components, rendered by the real kubectl as a user's kustomization would be.
import { writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { type KubernetesObject, loadAllYaml } from "@kubernetes/client-node";
import { kubectl } from "./kubectl.js";
import { manifestsDir, type Overlay, type Rendered } from "./overlays.js";
import { ownedTempDir } from "./owned-dirs.js";

export type Preset = "istio" | "linkerd" | "istio-ambient";

/** Every non-empty combination, in the chart's order: one component directory each. */
export const PRESET_COMBINATIONS: readonly (readonly Preset[])[] = [
  ["istio"],
  ["linkerd"],
  ["istio-ambient"],
  ["istio", "linkerd"],
  ["istio", "istio-ambient"],
  ["linkerd", "istio-ambient"],
  ["istio", "linkerd", "istio-ambient"],
];

/** The chart value, as --set takes it: "{istio,linkerd}". */
export const presetsValue = (presets: readonly Preset[]) => `{${presets.join(",")}}`;

export const presetsComponent = (presets: readonly Preset[]) => join(manifestsDir(), "presets", presets.join("+"));

/** A kustomization of the mode overlay plus the presets' component(s), as `kubectl apply -k` would render it. */
export async function renderOverlayWithPresets(
  overlay: Overlay,
  ...components: (readonly Preset[])[]
): Promise<Rendered> {
  return await renderOverlayWith(overlay, components.map(presetsComponent));
}

/** A kustomization of the mode overlay plus these component directories, in this order. */
export async function renderOverlayWith(overlay: Overlay, components: readonly string[]): Promise<Rendered> {
  const dir = ownedTempDir("cni-repair-kustomization-");
  // kustomize takes only relative paths to other kustomizations.
  const from = (path: string) => relative(dir, path);
  writeFileSync(
    join(dir, "kustomization.yaml"),
    [
      "apiVersion: kustomize.config.k8s.io/v1beta1",
      "kind: Kustomization",
      `resources: [${from(join(manifestsDir(), "overlays", overlay))}]`,
      `components: [${components.map(from).join(", ")}]`,
      "",
    ].join("\n"),
  );
  const yaml = await kubectl(["kustomize", dir]);
  return { overlay, yaml, objects: loadAllYaml(yaml) as KubernetesObject[] };
}
