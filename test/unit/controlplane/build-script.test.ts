// test/controlplane/build.sh builds only the binaries asked for and only those not cached yet, so a first
// `make demo` builds etcd and kube-apiserver and `make test` later builds the others once; binaries of the pinned
// version already on the machine (KUBEBUILDER_ASSETS, PATH) are taken instead of built. A fake `go` on
// PATH stands in for the compiler (the real build takes minutes); it records each build and writes the output.
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { repositoryFile } from "../../harness/binaries.js";
import { ownedTempDir } from "../../harness/owned-dirs.js";
import { type Finished, runToEnd } from "../../harness/run-to-end.js";

const ALL = ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "kubelet"];

// Logs the -o target of every `go build` and writes an executable there; fails for FAIL_BINARY.
const FAKE_GO = `#!/usr/bin/env bash
set -euo pipefail
while [[ $# -gt 0 && $1 != -o ]]; do shift; done
out=$2
echo "$(basename "$out")" >> "$GO_LOG"
[[ $(basename "$out") != "\${FAIL_BINARY:-}" ]] || exit 1
printf '#!/bin/sh\\n' > "$out"
chmod +x "$out"
`;

describe("test/controlplane/build.sh", function () {
  // Each case starts bash a few times; on a loaded shared machine that alone can take seconds.
  this.timeout(60_000);
  let dir = "";
  let goLog = "";

  beforeEach(() => {
    dir = ownedTempDir("cni-repair-build-script-");
    mkdirSync(join(dir, "bin"));
    writeFileSync(join(dir, "bin", "go"), FAKE_GO);
    chmodSync(join(dir, "bin", "go"), 0o755);
    goLog = join(dir, "go.log");
    writeFileSync(goLog, "");
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const build = (args: string[], env: Record<string, string> = {}): Promise<Finished> =>
    runToEnd(repositoryFile("test/controlplane/build.sh"), args, {
      env: {
        PATH: `${join(dir, "bin")}:${process.env.PATH ?? ""}`,
        CNI_REPAIR_CACHE: join(dir, "cache"),
        GO_LOG: goLog,
        ...env,
      },
    });
  const builds = (): string[] => readFileSync(goLog, "utf8").split("\n").filter(Boolean);

  it("builds only etcd and kube-apiserver when asked for them, and says what it leaves out", async () => {
    const result = await build(["etcd", "kube-apiserver"]);
    expect(result.code, result.stderr).to.equal(0);
    expect(builds()).to.deep.equal(["etcd", "kube-apiserver"]);
    expect(readdirSync(result.stdout.trim()).sort()).to.deep.equal(["etcd", "kube-apiserver"]);
    expect(result.stderr).to.include("building etcd kube-apiserver");
    expect(result.stderr).to.include("not built: kubectl kube-controller-manager kube-scheduler kubelet");
  });

  it("then builds the others once, with no name meaning all", async () => {
    await build(["etcd", "kube-apiserver"]);
    const all = await build([]);
    expect(all.code, all.stderr).to.equal(0);
    expect(builds()).to.deep.equal([
      "etcd",
      "kube-apiserver",
      "kubectl",
      "kube-controller-manager",
      "kube-scheduler",
      "kubelet",
    ]);
    expect(readdirSync(all.stdout.trim()).sort()).to.deep.equal([...ALL].sort());
    const again = await build([]);
    expect(again.code).to.equal(0);
    expect(again.stdout).to.equal(all.stdout);
    expect(again.stderr).to.equal("");
    expect(builds()).to.have.length(6);
  });

  it("reuses a cache directory that already holds every binary, building nothing", async () => {
    const first = await build([]);
    writeFileSync(goLog, "");
    for (const subset of [["etcd", "kube-apiserver"], ["kubectl"], ["kube-controller-manager", "kube-scheduler"], []]) {
      const result = await build(subset);
      expect(result.stdout).to.equal(first.stdout);
    }
    expect(builds()).to.deep.equal([]);
  });

  it("keeps what was built when a later binary fails, and never leaves the failed one behind", async () => {
    const failed = await build([], { FAIL_BINARY: "kubectl" });
    expect(failed.code).to.not.equal(0);
    const cacheDir = join(dir, "cache", "controlplane");
    const target = readdirSync(cacheDir).filter((name) => name.startsWith("kube-"));
    expect(target).to.have.length(1);
    expect(readdirSync(join(cacheDir, target[0] ?? "")).sort()).to.deep.equal(["etcd", "kube-apiserver"]);
    expect(readdirSync(cacheDir).filter((name) => name.startsWith(".building"))).to.deep.equal([]);
    writeFileSync(goLog, "");
    const retried = await build([]);
    expect(retried.code, retried.stderr).to.equal(0);
    expect(builds()).to.deep.equal(["kubectl", "kube-controller-manager", "kube-scheduler", "kubelet"]);
  });

  /** A stand-in binary that reports this version the way the real one does. */
  const fakeBinary = (where: string, name: string, version: string) => {
    mkdirSync(where, { recursive: true });
    const says = name === "etcd" ? `etcd Version: ${version.slice(1)}` : `Kubernetes ${version}`;
    writeFileSync(join(where, name), `#!/bin/sh\necho '${says}'\n`);
    chmodSync(join(where, name), 0o755);
  };
  const pinned = () => {
    const goMod = readFileSync(repositoryFile("test/controlplane/go.mod"), "utf8");
    const version = (module: string) => new RegExp(`^\\s*${module} (v[0-9.]+)`, "m").exec(goMod)?.[1] ?? "";
    return { kube: version("k8s.io/kubernetes"), etcd: version("go.etcd.io/etcd/server/v3") };
  };

  it("takes binaries of the pinned version from KUBEBUILDER_ASSETS and PATH instead of building them", async () => {
    const { kube, etcd } = pinned();
    const assets = join(dir, "assets");
    fakeBinary(assets, "etcd", etcd);
    fakeBinary(assets, "kube-apiserver", kube);
    fakeBinary(join(dir, "bin"), "kubelet", kube);
    const result = await build(["etcd", "kube-apiserver", "kubelet"], { KUBEBUILDER_ASSETS: assets });
    expect(result.code, result.stderr).to.equal(0);
    expect(builds()).to.deep.equal([]);
    expect(result.stderr).to.include(`using ${join(assets, "kube-apiserver")} (${kube})`);
    expect(result.stderr).to.include(`using ${join(dir, "bin", "kubelet")} (${kube})`);
    expect(readdirSync(result.stdout.trim()).sort()).to.deep.equal(["etcd", "kube-apiserver", "kubelet"]);
  });

  it("builds a binary whose version differs from the pinned one", async () => {
    const assets = join(dir, "assets");
    fakeBinary(assets, "kube-apiserver", "v1.20.0");
    const result = await build(["kube-apiserver"], { KUBEBUILDER_ASSETS: assets });
    expect(result.code, result.stderr).to.equal(0);
    expect(builds()).to.deep.equal(["kube-apiserver"]);
  });

  it("refuses an unknown binary by name, with exit code 2", async () => {
    const result = await build(["etcd", "kube-proxy"]);
    expect(result.code).to.equal(2);
    expect(result.stderr).to.include("unknown binary 'kube-proxy'");
    expect(builds()).to.deep.equal([]);
  });
});
