// The bench runs cni-repair with the Node flags the manifests install per mode: the workload command's flags (the
// DaemonSet's interpreter-only V8), then NODE_OPTIONS.
import { readFileSync } from "node:fs";
import { expect } from "chai";
import { installedNodeFlags } from "../../../bench/lib/installed-flags.js";
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
  it("per-node: the DaemonSet command's flags (no optimising compilers), then its NODE_OPTIONS", () => {
    const text = manifest("per-node");
    expect(commandFlags(text)).to.include.members(["--no-opt", "--no-maglev"]);
    expect(installedNodeFlags("per-node")).to.deep.equal([...commandFlags(text), ...nodeOptions(text)]);
  });

  it("cluster: NODE_OPTIONS alone (the Deployment runs the image's entry point as it is)", () => {
    const text = manifest("cluster");
    expect(text).to.not.include("command:");
    expect(installedNodeFlags("cluster")).to.deep.equal(nodeOptions(text));
  });
});
