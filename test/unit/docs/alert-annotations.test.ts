// What an alert's summary and description say is there when it fires: every {{ $labels.x }} they use is a label
// the alert's expression keeps, and the namespace label, which the sums keep from the controller's own targets,
// is named as cni-repair's namespace, never as the broken pods' (those are in every namespace).
import { expect } from "chai";
import { readAlertRules } from "../../harness/monitoring-files.js";

/** The labels an aggregation keeps (`by (a, b)`), for each aggregation of the expression; none: all labels kept. */
function keptLabelSets(expr: string): string[][] {
  return [...expr.matchAll(/\b(?:sum|max|min|avg|count) by \(([^)]*)\)/g)].map((match) =>
    (match[1] ?? "").split(",").map((label) => label.trim()),
  );
}

function usedLabels(text: string): string[] {
  return [...text.matchAll(/\{\{[^}]*\$labels\.(\w+)[^}]*\}\}/g)].map((match) => match[1] ?? "");
}

describe("alert annotations", () => {
  const rules = readAlertRules();

  it("finds the rules and some that name a label", () => {
    expect(rules.length).to.be.greaterThan(5);
    expect(rules.some((rule) => usedLabels(rule.annotations.summary ?? "").length > 0)).to.equal(true);
  });

  for (const rule of rules) {
    it(`${rule.alert} (${rule.labels.severity}) uses only labels its expression keeps`, () => {
      for (const [name, text] of Object.entries(rule.annotations)) {
        for (const label of usedLabels(text)) {
          for (const kept of keptLabelSets(rule.expr)) {
            expect(kept, `${name} uses $labels.${label}`).to.include(label);
          }
        }
      }
    });

    it(`${rule.alert} (${rule.labels.severity}) names the namespace as cni-repair's`, () => {
      for (const [name, text] of Object.entries(rule.annotations)) {
        const uses = text.match(/\{\{ \$labels\.namespace \}\}/g)?.length ?? 0;
        const asOurs = text.match(/cni-repair in namespace \{\{ \$labels\.namespace \}\}/g)?.length ?? 0;
        expect(asOurs, `${name}: "${text}"`).to.equal(uses);
      }
    });
  }

  it("the check itself: reads the kept labels of every aggregation", () => {
    expect(keptLabelSets("sum by (cluster, namespace) (a) - max by (job) (b)")).to.deep.equal([
      ["cluster", "namespace"],
      ["job"],
    ]);
    expect(usedLabels("{{ $value }} in {{ $labels.pod }} and {{ $labels.namespace }}")).to.deep.equal([
      "pod",
      "namespace",
    ]);
  });
});
