// Helm, built from the Go module proxy by tools/build.sh (cached), and the chart charts/cni-repair: rendered,
// packaged and installed the way a user would, with helm's own state kept in a directory of this test run.
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { type KubernetesObject, loadAllYaml } from "@kubernetes/client-node";
import { repositoryFile } from "./binaries.js";
import type { ControlPlane } from "./control-plane.js";
import type { Overlay, Rendered } from "./overlays.js";
import { ownedTempDir } from "./owned-dirs.js";
import { runToEnd } from "./run-to-end.js";

let binary: string | undefined;
let home: string | undefined;

/** tools/build.sh prints the cache directory, building helm only when the cache is empty. */
export function helmBinary(): string {
  binary ??= join(
    execFileSync(repositoryFile("tools/build.sh"), ["helm"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    }).trim(),
    "helm",
  );
  return binary;
}

export function chartDir(): string {
  return repositoryFile("charts/cni-repair");
}

/**
 * The value the chart requires (no image is published yet), as manifests/generate.sh sets it for the kustomize
 * manifests: so the chart's rendering and the overlays compare equal.
 */
export const IMAGE_VALUES: Readonly<Record<string, string>> = {
  "image.repository": "ghcr.io/cni-repair/cni-repair",
};

export type HelmOptions = {
  /** Talk to this control plane as its admin; omit for commands that need no server (lint, template, package). */
  readonly plane?: ControlPlane;
  readonly input?: string;
};

export type HelmResult = { readonly code: number | null; readonly stdout: string; readonly stderr: string };

/** helm with its config, cache and data under one temporary directory: nothing of the machine's leaks in. */
export async function runHelm(args: readonly string[], options: HelmOptions = {}): Promise<HelmResult> {
  home ??= ownedTempDir("cni-repair-helm-");
  const fullArgs = options.plane ? [`--kubeconfig=${options.plane.kubeconfigPath}`, ...args] : [...args];
  return await runToEnd(helmBinary(), fullArgs, {
    env: {
      HOME: home,
      HELM_CACHE_HOME: join(home, "cache"),
      HELM_CONFIG_HOME: join(home, "config"),
      HELM_DATA_HOME: join(home, "data"),
    },
    ...(options.input !== undefined && { input: options.input }),
  });
}

/** helm's stdout; rejects with its stderr when it exits non-zero. */
export async function helm(args: readonly string[], options: HelmOptions = {}): Promise<string> {
  const result = await runHelm(args, options);
  if (result.code !== 0) throw new Error(`helm ${args.join(" ")} exited ${result.code}:\n${result.stderr}`);
  return result.stdout;
}

/**
 * The chart packaged exactly as the release workflow does it: make chart-package (strict lint, then helm package),
 * into a directory of this test run. Returns the .tgz's path.
 */
export function packageChart(version = "0.0.0-test"): string {
  const out = ownedTempDir("cni-repair-chart-");
  const chart = execFileSync("make", ["-s", "chart-package", `VERSION=${version}`, `CHART_OUT=${out}`], {
    cwd: dirname(repositoryFile("Makefile")),
    encoding: "utf8",
    env: { ...process.env, HELM: helmBinary() },
    stdio: ["ignore", "pipe", "pipe"],
  }).trim();
  const expected = join(out, `cni-repair-${version}.tgz`);
  if (chart !== expected) throw new Error(`make chart-package printed ${chart}, not ${expected}`);
  return chart;
}

/** `--set` arguments for each value, in order. */
export function setValues(values: Readonly<Record<string, string>>): string[] {
  return Object.entries(values).flatMap(([key, value]) => ["--set", `${key}=${value}`]);
}

export type RenderOptions = {
  /** The release name (default cni-repair, which the kustomize manifests are rendered with). */
  readonly release?: string;
  /** Values files (--values), before the --set values. */
  readonly valueFiles?: readonly string[];
};

/** `helm template` of the chart in one mode, as the objects a `helm install` would create. */
export async function renderChart(
  mode: Overlay,
  values: Readonly<Record<string, string>> = {},
  options: RenderOptions = {},
): Promise<Rendered> {
  const yaml = await helm([
    "template",
    options.release ?? "cni-repair",
    chartDir(),
    "--namespace",
    "cni-repair",
    ...valueFileArgs(options.valueFiles),
    ...setValues({ ...IMAGE_VALUES, mode, ...values }),
  ]);
  return { overlay: mode, yaml, objects: loadAllYaml(yaml) as KubernetesObject[] };
}

function valueFileArgs(files: readonly string[] = []): string[] {
  return files.flatMap((file) => ["--values", file]);
}

/** The NOTES a `helm install` of the chart prints, from a client-side dry run (no cluster needed). */
export async function installNotes(
  namespace: string,
  values: Readonly<Record<string, string>> = {},
  valueFiles: readonly string[] = [],
): Promise<string> {
  const out = await helm([
    "install",
    "cni-repair",
    chartDir(),
    "--dry-run=client",
    "--namespace",
    namespace,
    ...valueFileArgs(valueFiles),
    ...setValues({ ...IMAGE_VALUES, ...values }),
  ]);
  const notes = out.indexOf("\nNOTES:\n");
  if (notes < 0) throw new Error(`helm install --dry-run printed no NOTES:\n${out}`);
  return out.slice(notes + "\nNOTES:\n".length);
}
