// Each preset value has one source, detect/presets.ts: the flag table is built from the presets (--preset resolves
// names to them; the flags that tune a preset, --ambient-* and --ztunnel-*, take its values as their defaults).
// Changing a preset value changes the resolved config, --help and docs/flags.md; left at their defaults the flags
// give back the preset unchanged.

import { readFileSync } from "node:fs";
import { expect } from "chai";
import { parseConfig } from "../../../src/config/config.js";
import { type FlagName, type FlagTable, flags, flagTable } from "../../../src/config/flags.js";
import { helpText } from "../../../src/config/help.js";
import { PRESETS, type Presets } from "../../../src/detect/presets.js";
import type { AmbientRule } from "../../../src/detect/rule.js";
import { FLAGS_REFERENCE_PATH, helpScreens, renderFlagsReference } from "../../docs/flags-reference.js";

const ambient = PRESETS["istio-ambient"];

/** Each tunable of the ambient preset, another value for it, its flag, and the default text that flag must show. */
const tunables: readonly {
  readonly field: keyof AmbientRule;
  readonly changed: AmbientRule[keyof AmbientRule];
  readonly flag: FlagName;
  readonly shown: string;
}[] = [
  { field: "action", changed: "delete", flag: "ambient-action", shown: "delete" },
  { field: "enrollGraceMs", changed: 90_000, flag: "ambient-enroll-grace", shown: "1m30s" },
  {
    field: "excludedNamespaces",
    changed: ["kube-system", "kube-public"],
    flag: "ambient-excluded-namespaces",
    shown: "kube-system,kube-public",
  },
  {
    field: "podSelector",
    changed: { key: "mesh.example/mode", value: "ambient" },
    flag: "ambient-pod-selector",
    shown: "mesh.example/mode=ambient",
  },
  {
    field: "namespaceSelector",
    changed: { key: "mesh.example/mode", value: "on" },
    flag: "ambient-namespace-selector",
    shown: "mesh.example/mode=on",
  },
  {
    field: "optOut",
    changed: { key: "mesh.example/mode", value: "off" },
    flag: "ambient-opt-out",
    shown: "mesh.example/mode=off",
  },
  { field: "ztunnelSelector", changed: "app=ztunnel-v2", flag: "ztunnel-selector", shown: "app=ztunnel-v2" },
  { field: "ztunnelNamespace", changed: "ztunnel", flag: "ztunnel-namespace", shown: "ztunnel" },
];

const ambientRuleOf = (table: FlagTable) =>
  parseConfig(["run", "--preset=istio-ambient"], {}, table).config.rules.find((rule) => rule.name === "istio-ambient");

/** The default a help text shows for a flag: the "default:" line of its entry. */
function shownDefault(text: string, name: FlagName): string | undefined {
  const lines = text.split("\n");
  const at = lines.findIndex((line) => new RegExp(`^ {2}--${name} `).test(line));
  return /^ {6}default: (\S+)/.exec(lines[at + 2] ?? "")?.[1];
}

describe("config/preset defaults (one source: detect/presets.ts)", () => {
  it("the flags at their defaults give back the istio-ambient preset exactly", () => {
    expect(ambientRuleOf(flags)).to.deep.equal(ambient);
  });

  it("every ambient flag's default is the preset's value, as --help and docs/flags.md show it", () => {
    const committed = readFileSync(FLAGS_REFERENCE_PATH, "utf8");
    for (const { flag } of tunables) {
      const shown = shownDefault(helpText("run"), flag);
      expect(shown, `--${flag}`).to.equal(flags[flag].defaultText);
      expect(committed, `--${flag}`).to.include(`      default: ${shown}`);
    }
  });

  it("docs/flags.md is what this process renders from the flag table (so the changes below reach it)", () => {
    expect(readFileSync(FLAGS_REFERENCE_PATH, "utf8")).to.equal(renderFlagsReference(helpScreens()));
  });

  for (const { field, changed, flag, shown } of tunables) {
    it(`changing the preset's ${field} changes the config, --help and docs/flags.md (--${flag})`, () => {
      expect(ambient[field], "the test changes the value").to.not.deep.equal(changed);
      const presets: Presets = { ...PRESETS, "istio-ambient": { ...ambient, [field]: changed } };
      const table = flagTable(presets);

      expect(ambientRuleOf(table)).to.deep.equal(presets["istio-ambient"]);
      expect(shownDefault(helpText("run", table), flag)).to.equal(shown);
      expect(shownDefault(helpText("scan", table), flag)).to.equal(shown);

      // The reference differs from the committed one exactly in this flag's default lines (one per subcommand).
      const before = renderFlagsReference(helpScreens()).split("\n");
      const after = renderFlagsReference(helpScreens(table)).split("\n");
      expect(after.length).to.equal(before.length);
      const changedLines = after.filter((line, i) => line !== before[i]);
      expect(changedLines.length).to.be.greaterThan(0);
      for (const line of changedLines) expect(line).to.match(new RegExp(`^ {6}default: ${shown.replace(".", "\\.")} `));
    });
  }

  it("changing a validator preset changes the rules and startup taint keys resolved, and --help", () => {
    const istio = { ...PRESETS.istio, exitCodes: [127], startupTaintKey: "example.com/istio-not-ready" };
    const table = flagTable({ ...PRESETS, istio });
    const { config } = parseConfig(["run", "--startup-taint=bootstrap-only"], {}, table);
    expect(config.rules).to.deep.equal([istio]);
    expect(config.startupTaint?.keys).to.deep.equal(["example.com/istio-not-ready"]);
    expect(table["startup-taint-keys"].help).to.include("istio example.com/istio-not-ready,");
    expect(flags["startup-taint-keys"].help).to.include(
      "istio cni.istio.io/not-ready, linkerd cni-repair.io/agent-not-ready, istio-ambient cni.istio.io/not-ready, custom cni-repair.io/agent-not-ready",
    );
  });

  it("the CNI agent selector's help lists each preset's own selector", () => {
    const presets: Presets = { ...PRESETS, linkerd: { ...PRESETS.linkerd, cniAgentSelector: "app=linkerd-cni-v2" } };
    expect(flags["cni-agent-selector"].help).to.include("linkerd k8s-app=linkerd-cni");
    expect(flagTable(presets)["cni-agent-selector"].help).to.include("linkerd app=linkerd-cni-v2");
  });
});
