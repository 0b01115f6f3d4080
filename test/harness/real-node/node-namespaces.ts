// A PID and mount namespace of the node's own, for containerd and the kubelet, with a /proc of that namespace
// mounted in it. Why: a pod with a hostPath /proc (Istio's CNI agent) sees the /proc of the mount namespace of
// containerd's shims, and Istio's in-place repair enters /proc/1/ns/net (the "host" network namespace) before it
// searches /proc for a pod's. On this machine PID 1 (the VM's init) refuses that even to root ("permission denied"),
// while the node's own PID 1 (containerd here) is an ordinary root process it may enter. The network namespace stays
// the machine's: containerd's is the host's, as on a real node.
import { readFileSync } from "node:fs";

/**
 * The command that runs `binary` as PID 1 of a new PID namespace with its own mount namespace and /proc (unshare
 * keeps every mount of the new namespace private: nothing leaks back to the machine). unshare waits in the machine's
 * namespace and ignores SIGTERM; if it dies, its child gets SIGTERM; when that child (PID 1) exits, the kernel kills
 * everything else in the namespace, and the mount namespace with its mounts goes with the last process.
 */
export function inOwnPidNamespace(binary: string, args: readonly string[]): [string, string[]] {
  return ["unshare", ["--pid", "--fork", "--mount-proc", "--kill-child=SIGTERM", "--", binary, ...args]];
}

/**
 * The command that runs `binary` in the PID and mount namespaces of the process `pid` (by the machine's numbering).
 * nsenter forks into the PID namespace and waits; the child gets SIGTERM if nsenter dies, so stopping nsenter stops it.
 */
export function inNamespacesOf(pid: number, binary: string, args: readonly string[]): [string, string[]] {
  return [
    "nsenter",
    [`--target=${pid}`, "--pid", "--mount", "--", "setpriv", "--pdeathsig", "SIGTERM", "--", binary, ...args],
  ];
}

/** The PID (machine's numbering) of the process unshare started: PID 1 of the new namespace. */
export function namespaceInit(unsharePid: number): number {
  const children = readFileSync(`/proc/${unsharePid}/task/${unsharePid}/children`, "utf8").trim().split(/\s+/);
  const pid = Number(children[0]);
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`unshare (pid ${unsharePid}) has no child yet`);
  return pid;
}
