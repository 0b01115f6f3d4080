// scan's and explain's -o yaml: the same structure as -o json, read back alike by YAML 1.2 and 1.1 readers.
import { expect } from "chai";
import { parse } from "yaml";
import { renderStructured } from "../../../src/cli/structured-output.js";

// Strings a YAML reader could take for something else, beside the plain kinds of value the reports hold.
const tricky = {
  words: ["on", "off", "yes", "no", "y", "n", "true", "null", "~", ""],
  numbers: ["0777", "1e3", "0x1f", "1_000", ".5", "12:30:00"],
  times: ["2026-12-03T20:09:14Z", "2026-12-03"],
  text: "line one\nline two: with a colon # and a hash",
  long: `${"very ".repeat(40)}long detail`,
  values: { count: 3, fraction: 0.5, none: null, empty: [], nested: [{ status: 403, ok: false }] },
};

describe("cli/structured output", () => {
  it("writes JSON with -o json", () => {
    expect(JSON.parse(renderStructured(tricky, "json"))).to.deep.equal(tricky);
  });

  it("writes YAML with the same structure, for YAML 1.2 and 1.1 readers", () => {
    const yaml = renderStructured(tricky, "yaml");
    expect(parse(yaml)).to.deep.equal(tricky);
    expect(parse(yaml, { version: "1.1" })).to.deep.equal(tricky);
    expect(yaml).to.not.match(/^%YAML/);
    expect(yaml).to.include(`long: ${tricky.long}`); // one line: no folding of long details
  });
});
