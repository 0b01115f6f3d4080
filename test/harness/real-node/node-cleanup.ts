// Removes everything a real test node created, on stop and after a crash: its processes (kubelet, containerd,
// the shims and every container), the mounts under its directory (rootfs overlays, network namespaces, shm,
// volumes), its cgroups, its bridge (the pods' veths go with their namespaces) and Service address link, the shim sockets containerd 1.6
// keeps in /run/containerd/s, the kernel settings the kubelet changed, and the directory. Synchronous, so that a
// process exit handler can run it; every step finds its objects from the node's directory name alone.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { isAlive } from "../owned-dirs.js";
import { BRIDGE_PREFIX, NODE_DIR_PREFIX, NodeLayout, SERVICE_LINK_PREFIX } from "./node-layout.js";

const CGROUP_V1 = "/sys/fs/cgroup";
const SHIM_SOCKETS = "/run/containerd/s";

/** The kernel settings the kubelet sets when protectKernelDefaults is off (it refuses to start otherwise). */
export const KUBELET_SYSCTLS = [
  "vm/overcommit_memory",
  "vm/panic_on_oom",
  "kernel/panic",
  "kernel/panic_on_oops",
  "kernel/keys/root_maxkeys",
  "kernel/keys/root_maxbytes",
] as const;

/**
 * The settings as they were before the first of the live nodes started, in one file for the machine: a second
 * node started meanwhile would otherwise save the first kubelet's values and put them back last.
 */
const SAVED_SYSCTLS = join(tmpdir(), "cni-repair-sysctls-before-nodes.json");

export function saveSysctls(): void {
  if (existsSync(SAVED_SYSCTLS)) return;
  const values = Object.fromEntries(
    KUBELET_SYSCTLS.map((key) => [key, readFileSync(`/proc/sys/${key}`, "utf8").trim()]),
  );
  writeFileSync(SAVED_SYSCTLS, JSON.stringify(values));
}

/** Puts the settings back once no node is left (no node directory remains). */
function restoreSysctlsAfterLastNode(): void {
  if (!existsSync(SAVED_SYSCTLS)) return;
  if (readdirSync(tmpdir()).some((name) => name.startsWith(NODE_DIR_PREFIX))) return;
  const values = JSON.parse(readFileSync(SAVED_SYSCTLS, "utf8")) as Record<string, string>;
  for (const [key, value] of Object.entries(values)) writeFileSync(`/proc/sys/${key}`, value);
  rmSync(SAVED_SYSCTLS);
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** The hierarchies of cgroup v1 (cpu, memory, pids, name=systemd, …): the kubelet creates its cgroups in each. */
function hierarchies(): string[] {
  if (!existsSync(CGROUP_V1)) return [];
  return readdirSync(CGROUP_V1).map((name) => join(CGROUP_V1, name));
}

/** Processes whose command line names the node's directory (kubelet, containerd, shims, CNI plugins). */
function processesOfDir(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(dir)) pids.push(pid);
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

/** Processes in any cgroup under the node's cgroup parent: the containers (and their sandboxes). */
export function processesOfCgroup(root: string): number[] {
  const pids = new Set<number>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name));
    }
    for (const line of readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n")) if (line) pids.add(Number(line));
  };
  for (const hierarchy of hierarchies()) {
    const dir = join(hierarchy, root);
    try {
      if (existsSync(dir)) walk(dir);
    } catch {
      // A cgroup removed while walking.
    }
  }
  return [...pids];
}

function killAll(layout: NodeLayout): void {
  for (let round = 0; round < 50; round++) {
    const pids = [...processesOfDir(layout.dir), ...processesOfCgroup(layout.cgroupRoot)].filter(isAlive);
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    sleepSync(100);
  }
  throw new Error(`processes of real node ${layout.dir} survive SIGKILL`);
}

/** containerd 1.6 names a shim's socket by sha256(<containerd socket>/<namespace>/<task id>). */
function shimSockets(layout: NodeLayout): string[] {
  const tasks = join(layout.containerdState, "io.containerd.runtime.v2.task");
  if (!existsSync(tasks)) return [];
  return readdirSync(tasks).flatMap((namespace) =>
    readdirSync(join(tasks, namespace)).map((id) =>
      join(
        SHIM_SOCKETS,
        createHash("sha256")
          .update(join(layout.containerdSocket, namespace, id))
          .digest("hex"),
      ),
    ),
  );
}

function removeShimSockets(layout: NodeLayout): void {
  for (const socket of shimSockets(layout)) rmSync(socket, { force: true });
  // The directories too, when nothing else (another node, the machine's containerd) uses them any more.
  for (const dir of [SHIM_SOCKETS, dirname(SHIM_SOCKETS)]) {
    try {
      rmdirSync(dir);
    } catch {
      // Not empty, or not there.
    }
  }
}

/** Mount points at or under the directory, deepest first (from /proc/self/mountinfo, octal escapes decoded). */
export function mountsUnder(dir: string): string[] {
  const points = readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((line) => line.split(" ")[4] ?? "")
    .map((point) =>
      point.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8))),
    )
    .filter((point) => point === dir || point.startsWith(`${dir}/`));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

function unmountAll(dir: string): void {
  for (let round = 0; round < 5; round++) {
    const points = mountsUnder(dir);
    if (points.length === 0) return;
    // Lazily: a namespace mount still referenced elsewhere detaches now and goes when the last user does.
    for (const point of points) execFileSync("umount", ["--lazy", point], { stdio: "ignore" });
  }
  throw new Error(`mounts under ${dir} survive umount: ${mountsUnder(dir).join(", ")}`);
}

function removeCgroups(root: string): void {
  const remove = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) remove(join(dir, entry.name));
    }
    rmdirSync(dir);
  };
  for (const hierarchy of hierarchies()) {
    const dir = join(hierarchy, root);
    if (existsSync(dir)) remove(dir);
  }
}

/** The node's network links that exist: its bridge, and the Service address's link if it served one. */
function linksOf(layout: NodeLayout): string[] {
  return [layout.bridge, layout.serviceLink].filter((link) => existsSync(`/sys/class/net/${link}`));
}

export function removeLink(link: string): void {
  if (existsSync(`/sys/class/net/${link}`)) execFileSync("ip", ["link", "delete", link], { stdio: "ignore" });
}

/** What of the node exists right now (all empty once it is cleaned up). */
export type NodeLeftovers = {
  readonly processes: number[];
  readonly mounts: string[];
  readonly cgroups: string[];
  readonly links: string[];
  readonly shimSockets: string[];
  readonly dir: boolean;
};

export function nodeLeftovers(layout: NodeLayout): NodeLeftovers {
  return {
    processes: [...processesOfDir(layout.dir), ...processesOfCgroup(layout.cgroupRoot)].filter(isAlive),
    mounts: mountsUnder(layout.dir),
    cgroups: hierarchies()
      .map((hierarchy) => join(hierarchy, layout.cgroupRoot))
      .filter(existsSync),
    links: linksOf(layout),
    shimSockets: shimSockets(layout).filter(existsSync),
    dir: existsSync(layout.dir),
  };
}

/** Removes everything of the node; safe to run twice and on a node that never fully started. */
export function cleanUpNode(layout: NodeLayout): void {
  killAll(layout);
  removeShimSockets(layout);
  unmountAll(layout.dir);
  removeCgroups(layout.cgroupRoot);
  for (const link of linksOf(layout)) removeLink(link);
  rmSync(layout.dir, { recursive: true, force: true });
  restoreSysctlsAfterLastNode();
}

/**
 * Cleans up the nodes of earlier runs whose owner process is gone: by their directories, and by what is left of
 * a node whose directory was already removed (its cgroups or bridge).
 */
export function cleanUpAbandonedNodes(): void {
  const ids = new Set<string>();
  for (const name of readdirSync(tmpdir())) if (name.startsWith(NODE_DIR_PREFIX)) ids.add(name);
  for (const hierarchy of hierarchies()) {
    for (const name of readdirSync(hierarchy)) if (name.startsWith(NODE_DIR_PREFIX)) ids.add(name);
  }
  for (const link of readdirSync("/sys/class/net")) {
    const prefix = [BRIDGE_PREFIX, SERVICE_LINK_PREFIX].find((p) => link.startsWith(p));
    if (prefix) ids.add(NODE_DIR_PREFIX + link.slice(prefix.length));
  }
  for (const name of ids) {
    const layout = new NodeLayout(join(tmpdir(), name));
    if (ownerAlive(layout.dir)) continue;
    cleanUpNode(layout);
  }
}

function ownerAlive(dir: string): boolean {
  try {
    const owner = Number(readFileSync(join(dir, "owner.pid"), "utf8"));
    return Number.isInteger(owner) && owner > 0 && isAlive(owner);
  } catch {
    return false;
  }
}
