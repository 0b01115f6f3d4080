// Podman as the test's container runtime: Debian's podman with runc, as root, with its own storage (vfs) and
// configuration in a temporary directory, so nothing of the machine's container state is read or changed.
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ownedTempDir } from "./owned-dirs.js";
import { type Finished, runToEnd } from "./run-to-end.js";

// crun fails on this machine's cgroup setup; runc works. CAP_SYS_RESOURCE is missing, so podman must not set the
// default rlimits; no journald, so events go to a file.
const CONTAINERS_CONF = `[containers]
default_ulimits = []
[engine]
runtime = "runc"
events_logger = "file"
`;

export class Podman {
  readonly #dir: string;

  private constructor(dir: string) {
    this.#dir = dir;
    writeFileSync(join(dir, "containers.conf"), CONTAINERS_CONF);
  }

  /** A runtime with empty storage; fails with what to run when podman or runc is missing. */
  static create(): Podman {
    for (const binary of ["podman", "runc"]) {
      const onPath = (process.env.PATH ?? "").split(":").some((dir) => dir && existsSync(join(dir, binary)));
      if (!onPath)
        throw new Error(`${binary} is not installed: run 'make podman' (Debian: apt-get install podman runc)`);
    }
    return new Podman(ownedTempDir("cni-repair-podman-"));
  }

  /** The podman command line up to the subcommand: this runtime's storage and configuration. */
  command(...args: string[]): string[] {
    return [
      "podman",
      "--root",
      join(this.#dir, "root"),
      "--runroot",
      join(this.#dir, "run"),
      "--storage-driver",
      "vfs",
      ...args,
    ];
  }

  /** The environment podman needs to find this runtime's configuration. */
  get env(): Record<string, string> {
    return { CONTAINERS_CONF: join(this.#dir, "containers.conf") };
  }

  async run(...args: string[]): Promise<Finished> {
    const [binary = "podman", ...rest] = this.command(...args);
    return await runToEnd(binary, rest, { env: this.env });
  }

  /** Like run, but a non-zero exit is an error carrying podman's message. */
  async ok(...args: string[]): Promise<string> {
    const result = await this.run(...args);
    if (result.code !== 0) throw new Error(`podman ${args.join(" ")} exited ${result.code}: ${result.stderr.trim()}`);
    return result.stdout.trim();
  }

  /** Loads one architecture's image from an OCI image layout holding an index; returns the image ID. */
  async load(layout: string, architecture: string): Promise<string> {
    return await this.ok("pull", "--quiet", "--arch", architecture, `oci:${layout}`);
  }

  /** Removes every container and image of this runtime and its storage. */
  async destroy(): Promise<void> {
    await this.run("rm", "--all", "--force", "--time", "0");
    await this.run("system", "reset", "--force");
    rmSync(this.#dir, { recursive: true, force: true });
  }
}
