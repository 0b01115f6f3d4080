// docs/runbooks.md has a section for every alert shipped in manifests/monitoring/alerts.yaml, and no other.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { repositoryFile } from "../../harness/binaries.js";
import { monitoringDir } from "../../harness/monitoring-files.js";

describe("docs/runbooks.md", () => {
  const alerts = [...readFileSync(join(monitoringDir(), "alerts.yaml"), "utf8").matchAll(/^\s*- alert: (\w+)$/gm)].map(
    (match) => match[1],
  );
  const sections = [...readFileSync(repositoryFile("docs/runbooks.md"), "utf8").matchAll(/^## (\w+)$/gm)].map(
    (match) => match[1],
  );

  it("finds the shipped alerts", () => {
    expect(alerts.length).to.be.greaterThan(5);
  });

  it("has one section per shipped alert, each with what it means, how to check and what to do", () => {
    expect([...sections].sort()).to.deep.equal([...alerts].sort());
    const text = readFileSync(repositoryFile("docs/runbooks.md"), "utf8");
    for (const section of text.split(/^## /m).slice(1)) {
      for (const part of ["**What it means.**", "**How to check.**", "**What to do.**"]) {
        expect(section, section.split("\n")[0]).to.include(part);
      }
    }
  });
});
