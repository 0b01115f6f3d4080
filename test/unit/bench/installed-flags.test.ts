// The bench runs cni-repair with the Node flags the manifests install per mode (the workload command's flags, then
// NODE_OPTIONS) and the V8 flags the controller sets itself after loading and after sync (the DaemonSet's
// CNI_REPAIR_V8_FLAGS and CNI_REPAIR_V8_FLAGS_AFTER_SYNC).
import { readFileSync } from "node:fs";
import { expect } from "chai";
import { installedNodeFlags, installedV8FlagsEnv } from "../../../bench/lib/installed-flags.js";
import { repositoryFile } from "../../harness/binaries.js";

const manifest = (overlay: string): string =>
  readFileSync(repositoryFile(`manifests/overlays/${overlay}/cni-repair.yaml`), "utf8");

const nodeOptions = (text: string): string[] => {
  const value = /- name: NODE_OPTIONS\n\s+value: "([^"]*)"/.exec(text)?.[1];
  if (value === undefined) throw new Error("no NODE_OPTIONS");
  return value.split(" ");
};

/** The quoted flags between the command's node and its script. */
const commandFlags = (text: string): string[] => {
  const block =
    /command:\n\s+- \/usr\/local\/bin\/node\n((?:\s+- "--[^"]+"\n)*)\s+- \/app\/dist\/src\/cli\/main\.js/.exec(text);
  return [...(block?.[1] ?? "").matchAll(/"(--[^"]+)"/g)].map((match) => match[1] as string);
};

describe("bench: cni-repair measured as installed", () => {
  it("per-node: the DaemonSet's command flags and NODE_OPTIONS on node's command line; its compiler flags in CNI_REPAIR_V8_FLAGS and CNI_REPAIR_V8_FLAGS_AFTER_SYNC", () => {
    const text = manifest("per-node");
    // Only a flag that leaves the code caches valid: compiler flags there would cost them (bench/README.md).
    expect(commandFlags(text)).to.deep.equal(["--no-memory-reducer"]);
    expect(installedNodeFlags("per-node")).to.deep.equal([...commandFlags(text), ...nodeOptions(text)]);
    const v8Flags = /- name: CNI_REPAIR_V8_FLAGS\n\s+value: "([^"]*)"/.exec(text)?.[1];
    expect(v8Flags).to.equal("--no-opt,--no-maglev,--invocation-count-for-turbofan=400");
    const afterSync = /- name: CNI_REPAIR_V8_FLAGS_AFTER_SYNC\n\s+value: "([^"]*)"/.exec(text)?.[1];
    expect(afterSync).to.equal("--maglev");
    expect(installedV8FlagsEnv("per-node")).to.deep.equal({
      CNI_REPAIR_V8_FLAGS: v8Flags,
      CNI_REPAIR_V8_FLAGS_AFTER_SYNC: afterSync,
    });
  });

  it("cluster: NODE_OPTIONS alone (the Deployment runs the image's entry point as it is)", () => {
    const text = manifest("cluster");
    expect(text).to.not.include("command:");
    expect(installedNodeFlags("cluster")).to.deep.equal(nodeOptions(text));
    expect(installedV8FlagsEnv("cluster")).to.deep.equal({});
  });
});
