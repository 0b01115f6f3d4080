// Counts the documentation states ("ten alerts", "three admission policies") are the repository's: the alerts of
// charts/cni-repair/files/alerts.yaml and the ValidatingAdmissionPolicies of the chart. The runbooks' table of alerts
// lists each shipped alert once.
import { readdirSync, readFileSync } from "node:fs";
import { expect } from "chai";
import { countClaims, documentationFiles, numberOf } from "../../docs/documentation-text.js";
import { repositoryFile } from "../../harness/binaries.js";
import { readAlertRules } from "../../harness/monitoring-files.js";

describe("counts in the documentation", () => {
  const files = documentationFiles();
  const alerts = [...new Set(readAlertRules().map((rule) => rule.alert))];
  const policies = readdirSync(repositoryFile("charts/cni-repair/templates")).filter((name) =>
    /^admission-policy-.+\.yaml$/.test(name),
  );

  it("finds the files, the alerts and the policies to count", () => {
    expect(files.map((file) => file.path)).to.include.members(["README.md", "docs/runbooks.md"]);
    expect(alerts.length).to.be.greaterThan(5);
    expect(policies.length).to.be.greaterThan(1);
  });

  it("every '<number> alerts' is the number of alerts shipped", () => {
    for (const claim of countClaims(files, "alerts\\b")) {
      expect(claim.count, `${claim.where}: "${claim.phrase}"`).to.equal(alerts.length);
    }
  });

  it("every '<number> admission policies' is the number of policies the chart ships", () => {
    for (const claim of countClaims(files, "admission policies|`?ValidatingAdmissionPolicies\\b")) {
      expect(claim.count, `${claim.where}: "${claim.phrase}"`).to.equal(policies.length);
    }
  });

  it("docs/runbooks.md's table lists every shipped alert once", () => {
    const text = readFileSync(repositoryFile("docs/runbooks.md"), "utf8");
    const rows = [...text.matchAll(/^\| \[`(\w+)`\]\(#\w+\) \|/gm)].map((match) => match[1]);
    expect([...rows].sort()).to.deep.equal([...alerts].sort());
  });

  describe("the check itself", () => {
    const file = {
      path: "x.md",
      text: "Eight alerts here,\nand 3 `ValidatingAdmissionPolicies`; one alert, many alerts",
    };
    it("reads number words and numerals, with where they stand", () => {
      expect(countClaims([file], "alerts\\b")).to.deep.equal([{ where: "x.md:1", phrase: "Eight alerts", count: 8 }]);
      expect(countClaims([file], "admission policies|`?ValidatingAdmissionPolicies\\b")).to.deep.equal([
        { where: "x.md:2", phrase: "3 `ValidatingAdmissionPolicies", count: 3 },
      ]);
      expect(numberOf("many")).to.equal(undefined);
    });
  });
});
