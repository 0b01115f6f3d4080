// admissionFindings: what the startup check logs for each state of the expected admission policies.
import { expect } from "chai";
import { type AdmissionFacts, admissionFindings } from "../../../src/cli/admission-check.js";

const enforced = (name: string, judgesTokenNode = false) => ({ name, state: "enforced" as const, judgesTokenNode });
const facts = (over: Partial<AdmissionFacts>): AdmissionFacts => ({
  expected: ["p-meshed-pods"],
  states: [enforced("p-meshed-pods")],
  nodeName: undefined,
  tokenNode: undefined,
  ...over,
});
const summary = (found: ReturnType<typeof admissionFindings>) =>
  found.map((finding) => `${finding.level} ${finding.message} ${String(finding.fields.policy ?? "")}`.trim());

describe("admissionFindings", () => {
  it("all enforced: one info line naming them", () => {
    const found = admissionFindings(facts({}));
    expect(found).to.deep.equal([
      { level: "info", message: "admission policies checked", fields: { policies: ["p-meshed-pods"] } },
    ]);
  });

  it("none expected: a warning pointing at the threat model and the chart", () => {
    const [finding, ...rest] = admissionFindings(facts({ expected: [], states: [] }));
    expect(rest).to.deep.equal([]);
    expect(finding?.level).to.equal("warn");
    expect(finding?.message).to.equal("no admission policies expected");
    expect(String(finding?.fields.consequence)).to.include("docs/threat-model.md");
  });

  it("one warning per policy that is missing, not enforced or unreadable; no all-clear among them", () => {
    const found = admissionFindings(
      facts({
        expected: ["a", "b", "c", "d"],
        states: [
          enforced("a"),
          { name: "b", state: "missing", missing: ["policy", "binding"] },
          { name: "c", state: "not-enforced", detail: 'its binding names policy "x"' },
          { name: "d", state: "unknown", detail: "forbidden: ..." },
        ],
      }),
    );
    expect(summary(found)).to.deep.equal([
      "warn admission policy missing b",
      "warn admission policy not enforced c",
      "warn cannot check admission policy d",
    ]);
    expect(found[0]?.fields.missing).to.equal("policy and binding");
  });

  it("per-node with a node-judging policy: warns when the token names no node or another node", () => {
    const perNode = { expected: ["own"], states: [enforced("own", true)], nodeName: "node-a" };
    expect(summary(admissionFindings(facts({ ...perNode, tokenNode: "node-a" })))).to.deep.equal([
      "info admission policies checked",
    ]);
    for (const tokenNode of [undefined, "node-b"]) {
      const found = admissionFindings(facts({ ...perNode, tokenNode }));
      expect(summary(found)).to.deep.equal(["warn token not bound to a pod on this node"]);
      expect(found[0]?.fields).to.deep.include({ node: "node-a", tokenNode: tokenNode ?? "(none)" });
      expect(String(found[0]?.fields.consequence)).to.include("admission policy own refuses");
    }
    // Who we are could not be asked, or no policy judges the token's node: nothing to say about the token.
    expect(summary(admissionFindings(facts({ ...perNode, tokenNode: null })))).to.deep.equal([
      "info admission policies checked",
    ]);
    expect(
      summary(admissionFindings(facts({ ...perNode, states: [enforced("own", false)], tokenNode: undefined }))),
    ).to.deep.equal(["info admission policies checked"]);
  });
});
