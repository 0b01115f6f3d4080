// Starts the controllers under test the same way (probe preloaded) and tells when each has synced.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { installedNodeFlags, installedV8FlagsEnv } from "./installed-flags.js";
import { ProbedProcess } from "./probed-process.js";

/**
 * "candidate": cni-repair built from other sources or run with other Node flags, for before/after figures.
 * "istio": Istio's own repair controller (lib/istio-repair.ts), node-scoped only, in the side-by-side runs.
 */
export type ControllerKind = "cni-repair" | "candidate" | "baseline" | "istio";

/** A cni-repair variant measured side by side with the real one. */
export type Candidate = {
  readonly main: string;
  readonly nodeFlags: readonly string[];
  /** Over the installed environment (e.g. the V8 flags an older build was installed with). */
  readonly env?: Readonly<Record<string, string>>;
};

/** cni-repair as the image carries it: bundled (`make bundle`, image/bundle.sh). */
export const OUR_MAIN = fileURLToPath(new URL("../../bundle/dist/src/cli/main.js", import.meta.url));
const BASELINE_MAIN = fileURLToPath(new URL("../baseline/controller.js", import.meta.url));
const FLOOR_MAIN = fileURLToPath(new URL("../floor/list-pods.js", import.meta.url));

/** The deletion limits; each is switched off when `--help` lists it (--deletion-burst only shapes the rate). */
const LIMIT_FLAGS = [
  "--max-deletions-per-minute",
  "--max-inflight-deletions-per-node",
  "--max-inflight-deletions-per-namespace",
  "--max-broken-fraction",
] as const;

export type OurFlags = {
  /** Flags that switch every limit off, for the limits-off runs (empty when none exist yet). */
  readonly limitsOff: readonly string[];
  /** Flags always passed: no CNI agent pods exist here, and a single replica needs no election. */
  readonly always: readonly string[];
  /** Whether the limits exist at all (otherwise the default-limits run is skipped). */
  readonly hasLimits: boolean;
  readonly notes: readonly string[];
};

/** Fails with the command that fixes it when the bundle the benchmarks run has not been built. */
function requireBundle(): void {
  if (!existsSync(OUR_MAIN))
    throw new Error(`${OUR_MAIN} is missing: run \`make bundle\` (make bench and make test do)`);
}

/** Reads `cni-repair --help` and picks the flag values that turn each limit off. */
export function detectOurFlags(): OurFlags {
  requireBundle();
  // The run command's flags: the top-level --help lists only the commands.
  const help = execFileSync(process.execPath, [OUR_MAIN, "run", "--help"], { encoding: "utf8" });
  const block = (flag: string): string | undefined => {
    const start = help.indexOf(`  ${flag} `);
    if (start < 0) return undefined;
    const next = help.indexOf("\n  --", start + 1);
    return help.slice(start, next < 0 ? undefined : next);
  };
  const limitsOff: string[] = [];
  const notes: string[] = [];
  for (const flag of LIMIT_FLAGS) {
    const text = block(flag);
    if (text === undefined) {
      notes.push(`${flag}: not in --help yet`);
      continue;
    }
    if (
      /\b0\b[^\n]*\b(off|unlimited|no limit|disabled?)\b/i.test(text) ||
      /\b(off|unlimited|disabled?)\b[^\n]*\b0\b/i.test(text)
    ) {
      limitsOff.push(`${flag}=0`);
    } else if (flag === "--max-broken-fraction") {
      limitsOff.push(`${flag}=1`);
    } else {
      notes.push(`${flag}: --help names no "off" value; left at its default`);
    }
  }
  const always: string[] = [];
  if (block("--cni-agent-gate") !== undefined) always.push("--cni-agent-gate=off");
  if (block("--leader-elect") !== undefined) always.push("--leader-elect=false");
  // The bench's CNI agents are not Istio's and carry no repair settings: without this, cni-repair would hold every
  // pod as "unknown" (Istio's defaults repair in place), where Istio's controller beside it deletes.
  if (block("--istio-repair") !== undefined) always.push("--istio-repair=ignore");
  return { limitsOff, always, hasLimits: limitsOff.length > 0, notes };
}

export type StartedController = {
  readonly process: ProbedProcess;
  /** Spawn to synced (cni-repair: /readyz 200; baseline: informer.start() resolved). */
  readonly readyMs: number;
  /** The initial LIST alone, when the controller reports it. */
  readonly listMs: number | undefined;
};

export type StartOptions = {
  readonly kind: ControllerKind;
  readonly kubeconfig: string;
  /** cni-repair flags (the baseline takes none). */
  readonly extraArgs: readonly string[];
  readonly readyTimeoutMs: number;
  /** Required for kind "candidate". */
  readonly candidate?: Candidate;
  /**
   * cni-repair's environment, as installed (lib/in-cluster.ts): mounted token, CA, namespace,
   * KUBERNETES_SERVICE_HOST/PORT, no kubeconfig. The baseline keeps its kubeconfig.
   */
  readonly inClusterEnv: Record<string, string>;
  /** Per-node runs: the baseline watches only this node's pods (cni-repair gets --node-name in extraArgs). */
  readonly nodeName?: string;
  /** cni-repair without the probe, exactly as installed (ProbedProcessOptions.bare): runs read /proc only. */
  readonly bare?: boolean;
};

/** cni-repair runs with the Node flags the manifests install for its mode (per-node runs: the DaemonSet's). */
const installedFlags = (options: Pick<StartOptions, "nodeName">): readonly string[] =>
  installedNodeFlags(options.nodeName ? "per-node" : "cluster");

/**
 * What the image and the manifests put in cni-repair's environment for its start: the mode's --v8-flags. A bundle
 * finds its code cache beside it (src/boot/code-cache.ts); one built before that (a candidate) had Node's compile
 * cache beside it instead, with the two variables its image set.
 */
function installedEnv(options: Pick<StartOptions, "nodeName">, main: string): Record<string, string> {
  const cache = join(dirname(main), "../../../compile-cache");
  return {
    ...installedV8FlagsEnv(options.nodeName ? "per-node" : "cluster"),
    ...(existsSync(cache) && { NODE_COMPILE_CACHE: cache, NODE_COMPILE_CACHE_PORTABLE: "1" }),
  };
}

const helps = new Map<string, string>();

/**
 * The installed environment as far as a candidate's build knows it: an older build refuses a CNI_REPAIR_ variable it
 * does not know (exit 2), so those its `run --help` does not name are left out.
 */
function knownTo(main: string, env: Record<string, string>): Record<string, string> {
  let help = helps.get(main);
  if (help === undefined) {
    help = execFileSync(process.execPath, [main, "run", "--help"], { encoding: "utf8" });
    helps.set(main, help);
  }
  const known = help;
  return Object.fromEntries(
    Object.entries(env).filter(([name]) => !name.startsWith("CNI_REPAIR_") || known.includes(`env: ${name}`)),
  );
}

const baseEnv = (kubeconfig: string): Record<string, string> => ({
  PATH: process.env.PATH ?? "",
  HOME: process.env.HOME ?? "/tmp",
  KUBECONFIG: kubeconfig,
});

/** The log line cni-repair writes once its caches are synced (the same moment /readyz turns 200). */
export const OUR_SYNCED_LINE = '"msg":"cache synced; repairing"';

/**
 * Spawns cni-repair (or the candidate) as installed, without waiting for anything: startController polls its
 * /readyz; many at once (the fleet rollout) wait for OUR_SYNCED_LINE instead, so the polling adds no load.
 */
export function spawnOurs(options: Omit<StartOptions, "readyTimeoutMs" | "kubeconfig">): ProbedProcess {
  if (options.kind === "candidate" && !options.candidate) throw new Error("no candidate configured");
  const main = options.kind === "candidate" ? (options.candidate?.main ?? OUR_MAIN) : OUR_MAIN;
  return new ProbedProcess({
    script: main,
    // The installed --http-address (every address): a host, even 127.0.0.1, costs a start a DNS lookup.
    args: ["run", "--http-port=0", "--log-format=json", ...options.extraArgs],
    // A candidate runs as installed too (its code or compile cache, the mode's V8 flags), its own Node flags after those.
    env: {
      PATH: process.env.PATH ?? "",
      ...options.inClusterEnv,
      ...(options.kind === "candidate"
        ? { ...knownTo(main, installedEnv(options, main)), ...options.candidate?.env }
        : installedEnv(options, main)),
    },
    nodeFlags: [
      ...installedFlags(options),
      ...(options.kind === "candidate" ? (options.candidate?.nodeFlags ?? []) : []),
    ],
    ...(options.bare && { bare: true }),
  });
}

export async function startController(options: StartOptions): Promise<StartedController> {
  if (options.kind === "istio") throw new Error("Istio's controller starts through lib/istio-repair.ts");
  if (options.kind === "baseline") {
    const env = {
      ...baseEnv(options.kubeconfig),
      ...(options.nodeName && { BASELINE_FIELD_SELECTOR: `spec.nodeName=${options.nodeName}` }),
    };
    const child = new ProbedProcess({ script: BASELINE_MAIN, args: [], env });
    // Its informer retries a failed list forever (every 5 s): the first failure is the answer.
    const line = await child.waitForLine(
      (text) => /"msg":"(synced|informer error)"/.test(text),
      options.readyTimeoutMs,
    );
    if (line.includes("informer error")) {
      await child.stop();
      throw new Error(`baseline could not sync: ${(JSON.parse(line) as { error?: string }).error}`);
    }
    return { process: child, readyMs: performance.now() - child.startedAt, listMs: undefined };
  }
  const child = spawnOurs(options);
  const listening = await child.waitForLine((line) => line.includes('"msg":"http server listening"'), 30_000);
  const listeningAt = new URL(String((JSON.parse(listening) as { url?: string }).url));
  listeningAt.hostname = "127.0.0.1";
  const url = listeningAt.origin;
  const deadline = performance.now() + options.readyTimeoutMs;
  for (;;) {
    const status = await fetch(`${url}/readyz`).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) break;
    if (!child.running || performance.now() > deadline) {
      throw new Error(`cni-repair did not become ready:\n${child.lines.slice(-10).join("\n")}`);
    }
    await sleep(20);
  }
  const readyMs = performance.now() - child.startedAt;
  // The pod list is the longest of the initial lists (node agents and namespaces are listed too, when used).
  const listings = child.lines
    .filter((line) => /"msg":"listed( pods)?"/.test(line))
    .map((line) => Number((JSON.parse(line) as { durationMs?: number }).durationMs));
  const listMs = listings.length > 0 ? Math.max(...listings) : undefined;
  return { process: child, readyMs, listMs };
}

/** The floor: a minimal process that pages through all pods (500 a page) and exits; spawn to done. */
export async function bareListMs(
  kubeconfig: string,
  timeoutMs: number,
): Promise<{ totalMs: number; listMs: number; pods: number }> {
  const child = new ProbedProcess({ script: FLOOR_MAIN, args: [], env: baseEnv(kubeconfig) });
  const line = await child.waitForLine((text) => text.includes('"msg":"listed"'), timeoutMs);
  const totalMs = performance.now() - child.startedAt;
  const { listMs, pods } = JSON.parse(line) as { listMs: number; pods: number };
  await child.stop();
  return { totalMs, listMs, pods };
}
