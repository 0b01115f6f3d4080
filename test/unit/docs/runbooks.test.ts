// docs/runbooks.md has a section for every alert shipped in charts/cni-repair/files/alerts.yaml, and no other; every
// alert's runbook_url points at its own section, under the page the chart uses by default.
import { readFileSync } from "node:fs";
import { loadYaml } from "@kubernetes/client-node";
import { expect } from "chai";
import GithubSlugger from "github-slugger";
import { repositoryFile } from "../../harness/binaries.js";
import { readAlertRules } from "../../harness/monitoring-files.js";

describe("docs/runbooks.md", () => {
  const rules = readAlertRules();
  const alerts = [...new Set(rules.map((rule) => rule.alert))];
  const text = readFileSync(repositoryFile("docs/runbooks.md"), "utf8");
  const sections = [...text.matchAll(/^## (\w+)$/gm)].map((match) => match[1]);

  it("finds the shipped alerts", () => {
    expect(alerts.length).to.be.greaterThan(5);
  });

  it("has one section per shipped alert, each with what it means, how to check and what to do", () => {
    expect([...sections].sort()).to.deep.equal([...alerts].sort());
    for (const section of text.split(/^## /m).slice(1)) {
      for (const part of ["**What it means.**", "**How to check.**", "**What to do.**"]) {
        expect(section, section.split("\n")[0]).to.include(part);
      }
    }
  });

  it("every alert has a summary, a description and a runbook_url", () => {
    for (const rule of rules) {
      expect(Object.keys(rule.annotations).sort(), rule.alert).to.deep.equal(["description", "runbook_url", "summary"]);
    }
  });

  it("every runbook_url's anchor is the GitHub slug of the alert's own heading, on the chart's default page", () => {
    // GitHub's anchors, in document order (a repeated heading gets -1, -2, ...).
    const slugger = new GithubSlugger();
    const anchors = new Map(
      [...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) => [slugger.slug(match[1] ?? ""), match[1]] as const),
    );
    const values = loadYaml<{ prometheusRule: { runbookBaseUrl: string } }>(
      readFileSync(repositoryFile("charts/cni-repair/values.yaml"), "utf8"),
    );
    for (const rule of rules) {
      const [page, anchor = ""] = rule.annotations.runbook_url?.split("#") ?? [];
      expect(page, `${rule.alert}: the page (prometheusRule.runbookBaseUrl replaces it)`).to.equal(
        values.prometheusRule.runbookBaseUrl,
      );
      expect(anchors.get(anchor), `${rule.alert}: #${anchor} is no heading of docs/runbooks.md`).to.equal(rule.alert);
    }
  });
});
