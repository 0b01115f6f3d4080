// manifests/ (the kustomize layout) is generated from the chart by manifests/generate.sh (make manifests): the
// committed files are exactly what it writes now, and a template changed without regenerating makes them differ.
import { execFileSync } from "node:child_process";
import { cpSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { expect } from "chai";
import { repositoryFile } from "../../harness/binaries.js";
import { chartDir, helmBinary } from "../../harness/helm.js";
import { manifestsDir } from "../../harness/overlays.js";
import { ownedTempDir } from "../../harness/owned-dirs.js";

/** Runs the generator into a fresh directory and returns that directory. */
function generate(chart: string): string {
  const out = ownedTempDir("cni-repair-manifests-");
  execFileSync(repositoryFile("manifests/generate.sh"), [out], {
    env: { ...process.env, CHART: chart, HELM: helmBinary() },
    stdio: ["ignore", "ignore", "pipe"],
  });
  return out;
}

/** Every file under the directory, relative to it, with its content; the generator's ownership marker excluded. */
function filesOf(dir: string): Map<string, string> {
  return new Map(
    readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name !== "owner.pid")
      .map((entry) => {
        const path = join(entry.parentPath, entry.name);
        return [relative(dir, path), readFileSync(path, "utf8")] as const;
      }),
  );
}

/** The names of the generated files that differ from (or are missing in) the committed manifests/. */
function drift(generated: string): string[] {
  const committed = filesOf(manifestsDir());
  return [...filesOf(generated)]
    .filter(([path, text]) => committed.get(path) !== text)
    .map(([path]) => path)
    .sort();
}

describe("manifests: generated from the chart", function () {
  this.timeout(20 * 60_000);

  it("the committed manifests are what make manifests writes (run it after changing the chart)", () => {
    const generated = generate(chartDir());
    const files = [...filesOf(generated).keys()].sort();
    expect(files).to.include.members([
      "namespace/namespace.yaml",
      "overlays/cluster/cni-repair.yaml",
      "overlays/per-node/cni-repair.yaml",
      "overlays/label-only/cni-repair.yaml",
      "overlays/dry-run/cni-repair.yaml",
      "permissions/watch-namespaces/rbac.yaml",
      "presets/istio+linkerd/kustomization.yaml",
      "presets/istio+linkerd/meshed-pods-policy.yaml",
      "presets/istio-ambient/rbac-watch-namespaces.yaml",
      "monitoring/prometheus-rule.yaml",
      "monitoring/alerts.yaml",
      "monitoring/dashboard.json",
    ]);
    expect(drift(generated), "files differing from manifests/: run make manifests").to.deep.equal([]);
    // Nothing in manifests/ that the generator does not write, apart from the generator itself.
    const stale = [...filesOf(manifestsDir()).keys()].filter((path) => !files.includes(path) && path !== "generate.sh");
    expect(stale, "files in manifests/ that make manifests no longer writes").to.deep.equal([]);
  });

  it("an alert edited in the chart without regenerating makes the test above fail", () => {
    const chart = join(ownedTempDir("cni-repair-chart-copy-"), "cni-repair");
    cpSync(chartDir(), chart, { recursive: true });
    const alerts = join(chart, "files", "alerts.yaml");
    writeFileSync(alerts, readFileSync(alerts, "utf8").replace("for: 15m", "for: 20m"));
    expect(drift(generate(chart))).to.deep.equal(["monitoring/alerts.yaml", "monitoring/prometheus-rule.yaml"]);
  });

  it("a template changed without regenerating makes the test above fail", () => {
    const chart = join(ownedTempDir("cni-repair-chart-copy-"), "cni-repair");
    cpSync(chartDir(), chart, { recursive: true });
    const template = join(chart, "templates", "network-policy.yaml");
    writeFileSync(
      template,
      readFileSync(template, "utf8").replace('policyTypes: ["Ingress"]', 'policyTypes: ["Ingress", "Egress"]'),
    );
    expect(drift(generate(chart))).to.deep.equal(
      [
        "overlays/cluster/cni-repair.yaml",
        "overlays/per-node/cni-repair.yaml",
        "overlays/label-only/cni-repair.yaml",
        "overlays/dry-run/cni-repair.yaml",
      ].sort(),
    );
  });
});
