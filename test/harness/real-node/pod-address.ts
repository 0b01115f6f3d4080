// Renumbers a pod's interface behind the kubelet's back, inside the pod's network namespace, from the machine: the
// way to make Istio's in-place repair fail for real on one pod. Istio finds a pod's network namespace by searching
// /proc for a process whose namespace has an interface with the pod's IP (cni/pkg/repair/netns_linux.go); with
// another address there it finds none ("failed to find network namespace") and repairs nothing. The pod's validator
// still fails as before (126): it checks the redirect on loopback, and needs only some non-loopback address (without
// any, pilot-agent exits 1, "no valid local IP address found", before it validates).
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { processesOfCgroup } from "./node-cleanup.js";
import type { NodeLayout } from "./node-layout.js";

/** The pod's cgroup (relative to a hierarchy), where the kubelet put it under the node's cgroup parent. */
function podCgroup(layout: NodeLayout, podUid: string): string {
  const base = "/sys/fs/cgroup/pids";
  const find = (relative: string): string | undefined => {
    if (relative.endsWith(`/pod${podUid}`)) return relative;
    for (const entry of readdirSync(join(base, relative), { withFileTypes: true })) {
      const found = entry.isDirectory() ? find(join(relative, entry.name)) : undefined;
      if (found) return found;
    }
    return undefined;
  };
  const found = existsSync(join(base, layout.cgroupRoot)) ? find(layout.cgroupRoot) : undefined;
  if (!found) throw new Error(`no cgroup pod${podUid} under ${join(base, layout.cgroupRoot)}`);
  return found;
}

/** An address of TEST-NET-1 (RFC 5737): on no network, so no other namespace has it. */
export const RENUMBERED_ADDRESS = "192.0.2.1/32";

/** Replaces the pod's IPv4 addresses on eth0 with RENUMBERED_ADDRESS; returns the addresses removed. */
export function renumberPod(layout: NodeLayout, podUid: string): string[] {
  const pid = processesOfCgroup(podCgroup(layout, podUid))[0];
  if (pid === undefined) throw new Error(`pod ${podUid} has no process to find its network namespace by`);
  const inPod = (...args: string[]) =>
    execFileSync("nsenter", [`--target=${pid}`, "--net", "--", "ip", ...args], { encoding: "utf8" });
  const addresses = inPod("-4", "-o", "addr", "show", "dev", "eth0")
    .split("\n")
    .flatMap((line) => /\binet (\S+)/.exec(line)?.[1] ?? []);
  inPod("-4", "addr", "flush", "dev", "eth0");
  inPod("-4", "addr", "add", RENUMBERED_ADDRESS, "dev", "eth0");
  return addresses;
}
