// Reads the image index that `make image` wrote as an OCI image layout (dist/image/oci): which image is which
// platform, and the files each layer holds (listed by GNU tar).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { repositoryFile } from "./binaries.js";
import { runToEnd } from "./run-to-end.js";

type Descriptor = { readonly digest: string; readonly platform?: { readonly architecture: string } };
type Index = { readonly manifests: readonly Descriptor[] };
type Manifest = { readonly config: Descriptor; readonly layers: readonly Descriptor[] };

export class OciLayout {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  /** dist/image/oci of this repository; a missing image is an error that says how to build it. */
  static built(): OciLayout {
    try {
      return new OciLayout(repositoryFile("dist/image/oci/index.json").replace(/\/index\.json$/, ""));
    } catch {
      throw new Error("dist/image/oci is missing: run 'make image' first (make test does)");
    }
  }

  blobPath(digest: string): string {
    return join(this.dir, "blobs", ...digest.split(":"));
  }

  #json<T>(digest: string): T {
    return JSON.parse(readFileSync(this.blobPath(digest), "utf8")) as T;
  }

  /** The image index the layout points at (the layout's own index.json holds exactly that one entry). */
  index(): Index {
    const top = JSON.parse(readFileSync(join(this.dir, "index.json"), "utf8")) as Index;
    if (top.manifests.length !== 1 || !top.manifests[0]) throw new Error("expected one image index in the layout");
    return this.#json<Index>(top.manifests[0].digest);
  }

  architectures(): string[] {
    return this.index().manifests.map((descriptor) => descriptor.platform?.architecture ?? "?");
  }

  manifest(architecture: string): Manifest {
    const descriptor = this.index().manifests.find((m) => m.platform?.architecture === architecture);
    if (!descriptor) throw new Error(`no ${architecture} image in the index`);
    return this.#json<Manifest>(descriptor.digest);
  }

  /** Every path in the image's layers, without the leading "./". */
  async files(architecture: string): Promise<string[]> {
    const names: string[] = [];
    for (const layer of this.manifest(architecture).layers) {
      const listing = await runToEnd("tar", ["--list", "--gzip", "--file", this.blobPath(layer.digest)]);
      if (listing.code !== 0) throw new Error(`tar cannot list ${layer.digest}: ${listing.stderr}`);
      names.push(
        ...listing.stdout
          .split("\n")
          .filter(Boolean)
          .map((name) => name.replace(/^\.\//, "")),
      );
    }
    return names;
  }
}
