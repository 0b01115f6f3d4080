// The bench runs cni-repair with the Node flags the manifests install per mode; this keeps the two the same.
import { readFileSync } from "node:fs";
import { expect } from "chai";
import { INSTALLED_NODE_FLAGS } from "../../../bench/lib/controllers.js";
import { repositoryFile } from "../../harness/binaries.js";

const nodeOptions = (overlay: string): string => {
  const text = readFileSync(repositoryFile(`manifests/overlays/${overlay}/cni-repair.yaml`), "utf8");
  const value = /- name: NODE_OPTIONS\n\s+value: "([^"]*)"/.exec(text)?.[1];
  if (value === undefined) throw new Error(`no NODE_OPTIONS in the ${overlay} overlay`);
  return value;
};

describe("bench: cni-repair measured as installed", () => {
  it("runs with the NODE_OPTIONS of the cluster and per-node manifests", () => {
    expect(INSTALLED_NODE_FLAGS.cluster.join(" ")).to.equal(nodeOptions("cluster"));
    expect(INSTALLED_NODE_FLAGS.perNode.join(" ")).to.equal(nodeOptions("per-node"));
  });
});
