// The real node's container runtime: Debian's containerd 1.6 with runc, with its own root, state, sockets, runc
// state and CNI directories inside the node's directory (never the machine's /var/lib/containerd or
// /run/containerd), the cgroupfs driver (no systemd here), and the test images imported (no registry here).
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ManagedProcess } from "../managed-process.js";
import { runToEnd } from "../run-to-end.js";
import { waitFor } from "../wait.js";
import type { NodeImage, NodeImages } from "./node-images.js";
import type { NodeLayout } from "./node-layout.js";
import { inOwnPidNamespace, namespaceInit } from "./node-namespaces.js";

/** Snapshotters in the order tried: overlayfs works on this machine's ext4; native copies, and works anywhere. */
export const SNAPSHOTTERS = ["overlayfs", "native"] as const;
export type Snapshotter = (typeof SNAPSHOTTERS)[number];

function config(layout: NodeLayout, images: NodeImages, snapshotter: Snapshotter): string {
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return `version = 2
root = "${layout.containerdRoot}"
state = "${layout.containerdState}"
# Snapshotters that need extra kernel or file-system support only log errors here.
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "${layout.containerdSocket}"
[ttrpc]
  address = "${layout.containerdSocket}.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "${join(layout.dir, "containerd", "opt")}"
[${cri}]
  sandbox_image = "${images.pause.ref}"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  disable_apparmor = true
  # CAP_SYS_RESOURCE is missing here, so no process may lower its oom_score_adj (the sandbox's -998 failed with
  # "runc create failed: unable to start container process: can't get final child's PID from pipe: EOF"):
  # containerd clamps every container's score to its own.
  restrict_oom_score_adj = true
  # Pod network namespaces are mounted in the state directory, not /var/run/netns: the cleanup finds them there.
  netns_mounts_under_state_dir = true
  [${cri}.containerd]
    snapshotter = "${snapshotter}"
    default_runtime_name = "runc"
    [${cri}.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [${cri}.containerd.runtimes.runc.options]
        # cgroup v1 and no systemd: the kubelet's cgroupDriver is cgroupfs too (crun fails on this cgroup setup).
        SystemdCgroup = false
        BinaryName = "runc"
        Root = "${layout.runcRoot}"
  [${cri}.cni]
    bin_dir = "${layout.cniBinDir}"
    conf_dir = "${layout.cniConfDir}"
`;
}

export class Containerd {
  readonly process: ManagedProcess;
  readonly #layout: NodeLayout;
  readonly #snapshotter: Snapshotter;
  /** containerd's PID (the machine's numbering) when it is PID 1 of the node's own PID namespace. */
  readonly namespacePid: number | undefined;

  private constructor(
    process: ManagedProcess,
    layout: NodeLayout,
    snapshotter: Snapshotter,
    namespacePid: number | undefined,
  ) {
    this.process = process;
    this.#layout = layout;
    this.#snapshotter = snapshotter;
    this.namespacePid = namespacePid;
  }

  /**
   * Starts containerd (as PID 1 of a PID and mount namespace of its own with `ownPidNamespace`: node-namespaces.ts),
   * waits for its socket, and imports the images under the names pods use.
   */
  static async start(
    layout: NodeLayout,
    images: NodeImages,
    snapshotter: Snapshotter,
    ownPidNamespace = false,
  ): Promise<Containerd> {
    mkdirSync(join(layout.dir, "containerd"), { recursive: true });
    const configFile = join(layout.dir, "containerd.toml");
    writeFileSync(configFile, config(layout, images, snapshotter));
    const args = [`--config=${configFile}`, "--log-level=info"];
    const [binary, argv] = ownPidNamespace ? inOwnPidNamespace("containerd", args) : ["containerd", args];
    const process = new ManagedProcess("containerd", binary, argv, join(layout.dir, "containerd.log"));
    await waitFor(
      "containerd's socket",
      () => {
        if (!process.running) throw new Error(`containerd exited:\n${process.logTail()}`);
        return existsSync(layout.containerdSocket);
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    const containerd = new Containerd(
      process,
      layout,
      snapshotter,
      ownPidNamespace && process.pid !== undefined ? namespaceInit(process.pid) : undefined,
    );
    for (const image of [images.pause, images.mesh]) await containerd.importImage(image);
    return containerd;
  }

  /**
   * Stops containerd gracefully. In its own PID namespace the signal goes to containerd itself (unshare ignores
   * SIGTERM); when it exits, the kernel ends the namespace's other processes (shims, containers).
   */
  async stop(graceMs: number): Promise<void> {
    if (this.namespacePid !== undefined && this.process.running) {
      try {
        process.kill(this.namespacePid, "SIGTERM");
      } catch {
        // Already gone.
      }
    }
    await this.process.stop("SIGTERM", graceMs);
  }

  /** ctr against this containerd, in the CRI plugin's namespace; a non-zero exit is an error with ctr's message. */
  async ctr(...args: string[]): Promise<string> {
    const result = await runToEnd("ctr", [
      "--address",
      this.#layout.containerdSocket,
      "--namespace",
      "k8s.io",
      ...args,
    ]);
    if (result.code !== 0) throw new Error(`ctr ${args.join(" ")} exited ${result.code}: ${result.stderr.trim()}`);
    return result.stdout;
  }

  /**
   * Imports this machine's platform of an OCI image layout (e.g. dist/image/oci of `make image`) under `ref`, the
   * reference a pod names: its image is then present, so IfNotPresent pulls nothing.
   */
  async importOciLayout(layoutDir: string, ref: string): Promise<void> {
    const archive = join(this.#layout.dir, "oci-import.tar");
    const tar = await runToEnd("tar", ["--create", "--file", archive, "--directory", layoutDir, "."]);
    if (tar.code !== 0) throw new Error(`tar of ${layoutDir} exited ${tar.code}: ${tar.stderr.trim()}`);
    const arch = { x64: "amd64", arm64: "arm64" }[process.arch as string] ?? process.arch;
    try {
      await this.ctr(
        "images",
        "import",
        `--snapshotter=${this.#snapshotter}`,
        `--platform=linux/${arch}`,
        `--index-name=${ref}`,
        archive,
      );
    } finally {
      rmSync(archive, { force: true });
    }
  }

  /** Imports a docker-archive image (built for the tests) under the reference pods use. */
  async importImage(image: NodeImage): Promise<void> {
    await this.ctr("images", "import", `--snapshotter=${this.#snapshotter}`, image.archive);
    await this.ctr("images", "tag", "--force", image.builtAs, image.ref);
    await this.ctr("images", "rm", image.builtAs);
  }
}
