// The commands docs/runbooks.md gives for the 3 a.m. path work with what the repository ships: the Lease holder
// names the leader's pod as the election writes its identity, the Lease and label names are the manifests', and
// `kubectl exec` runs the image's own entry point (the image has no shell). No documentation reads the logs of
// "the Deployment" (any replica, often the standby).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type KubernetesObject, loadAllYaml } from "@kubernetes/client-node";
import { expect } from "chai";
import { electionIdentity } from "../../../src/election/identity.js";
import { documentationFiles } from "../../docs/documentation-text.js";
import { documentedLeaderPod, runbookLine } from "../../docs/runbook-commands.js";
import { repositoryFile } from "../../harness/binaries.js";
import {
  controllerContainer,
  imageEntrypoint,
  manifestsDir,
  type Overlay,
  workloadOf,
} from "../../harness/overlays.js";

/** The shipped overlay's workload and container, read from its file (no kustomize needed). */
function shipped(overlay: Overlay) {
  const yaml = readFileSync(join(manifestsDir(), "overlays", overlay, "cni-repair.yaml"), "utf8");
  const rendered = { overlay, yaml, objects: loadAllYaml(yaml) as KubernetesObject[] };
  return { workload: workloadOf(rendered), container: controllerContainer(rendered) };
}

describe("docs/runbooks.md: the acting pod, its logs, scan and explain", () => {
  it("the documented expansion turns the Lease holder the election writes into the pod's name", () => {
    for (const podName of ["cni-repair-5d8c7b9f6-x2k4q", "cni-repair", "a-b-c"]) {
      const holder = electionIdentity(podName);
      expect(documentedLeaderPod(holder), holder).to.equal(podName);
    }
  });

  it("reads the Lease the cluster overlay names, in the install's namespace", () => {
    const lease = /get lease (\S+) -o jsonpath='\{\.spec\.holderIdentity\}'/.exec(runbookLine(/^holder=/));
    const { container } = shipped("cluster");
    expect(container.args, "the cluster overlay's Lease").to.include(`--leader-election-id=${lease?.[1]}`);
    expect(runbookLine(/^holder=/)).to.include("kubectl -n cni-repair ");
  });

  it("per node, selects the DaemonSet's pods by a label of its pod template", () => {
    const selector = /get pods -l (\S+)=(\S+) /.exec(runbookLine(/^pod=\$\(kubectl/));
    const { workload } = shipped("per-node");
    expect(workload.kind).to.equal("DaemonSet");
    expect(workload.spec?.template.metadata?.labels?.[selector?.[1] ?? ""]).to.equal(selector?.[2]);
  });

  it("every `kubectl exec` in the documentation runs the image's entry point, then one of its commands", () => {
    const { node, script } = imageEntrypoint();
    const execs = documentationFiles().flatMap((file) =>
      [...file.text.matchAll(/kubectl [^\n`]*\bexec\b[^\n`]* -- ([^\n`]+)/g)].map((match) => ({
        where: file.path,
        command: (match[1] ?? "").split(/\s+/),
      })),
    );
    expect(execs.length, "the runbooks show scan and explain through kubectl exec").to.be.at.least(2);
    for (const { where, command } of execs) {
      expect(command.slice(0, 2), `${where}: ${command.join(" ")}`).to.deep.equal([node, script]);
      expect(["scan", "explain", "version"], `${where}: ${command.join(" ")}`).to.include(command[2]);
    }
  });

  it("the Dockerfile's entry point is the image's", () => {
    const { node, script } = imageEntrypoint();
    expect(readFileSync(repositoryFile("Dockerfile"), "utf8")).to.match(
      new RegExp(`^ENTRYPOINT \\["${node}", "${script}"\\]$`, "m"),
    );
  });

  it("no documentation reads the logs of the Deployment or the DaemonSet (any replica, not the acting one)", () => {
    for (const file of documentationFiles()) {
      expect(file.text, file.path).not.to.match(/\blogs\s+(?:-\S+\s+)*(?:deploy|deployment|ds|daemonset)\//);
    }
  });
});
