// Istio's data-plane images for the real node (test/istio/images.sh builds them from Istio's own sources, pinned by
// test/istio/go.mod, and caches them): the CNI node agent (install-cni, with the istio-cni plugin) and proxyv2,
// whose pilot-agent is the injector's istio-validation init container.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { repositoryFile } from "../binaries.js";
import type { NodeImage } from "./node-images.js";

export type IstioImages = {
  readonly agent: NodeImage;
  readonly proxy: NodeImage;
  /** The Istio they were built from: "istio.io/istio v0.0.0-…". */
  readonly version: string;
};

let cached: IstioImages | undefined;

/** Builds them on first use (the Istio binaries too: `make istio` does that ahead, it takes long cold). */
export function istioImages(): IstioImages {
  if (cached) return cached;
  const dir = execFileSync(repositoryFile("test/istio/images.sh"), {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
  const images = new Map<string, NodeImage>();
  for (const line of readFileSync(join(dir, "names"), "utf8").trim().split("\n")) {
    const [name = "", builtAs = "", ref = ""] = line.split(" ");
    images.set(name, { archive: join(dir, `${name}.tar`), builtAs, ref });
  }
  const agent = images.get("install-cni");
  const proxy = images.get("proxyv2");
  if (!agent || !proxy) throw new Error(`${dir}/names does not list the install-cni and proxyv2 images`);
  cached = { agent, proxy, version: readFileSync(join(dir, "version"), "utf8").trim() };
  return cached;
}
