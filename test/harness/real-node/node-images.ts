// The images the real node runs (test/images/build.sh builds and caches them): the sandbox's pause image and the
// mesh image holding the validators, the CNI agent and the app.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { repositoryFile } from "../binaries.js";

export type NodeImage = {
  /** The docker-archive tarball for `ctr images import`. */
  readonly archive: string;
  /** The reference the archive carries (the build's loopback registry). */
  readonly builtAs: string;
  /** The reference pods use (never pulled: imagePullPolicy Never). */
  readonly ref: string;
};

export type NodeImages = { readonly pause: NodeImage; readonly mesh: NodeImage };

let cached: NodeImages | undefined;

export function nodeImages(): NodeImages {
  if (cached) return cached;
  const dir = execFileSync(repositoryFile("test/images/build.sh"), {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
  const images = new Map<string, NodeImage>();
  for (const line of readFileSync(join(dir, "names"), "utf8").trim().split("\n")) {
    const [name = "", builtAs = "", ref = ""] = line.split(" ");
    images.set(name, { archive: join(dir, `${name}.tar`), builtAs, ref });
  }
  const pause = images.get("pause");
  const mesh = images.get("mesh");
  if (!pause || !mesh) throw new Error(`${dir}/names does not list the pause and mesh images`);
  cached = { pause, mesh };
  return cached;
}
