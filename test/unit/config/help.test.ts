// --help is generated from the flag table: every flag, its type, default and env var appear.

import { expect } from "chai";
import { envVarName, flagNames, flags } from "../../../src/config/flags.js";
import { helpText } from "../../../src/config/help.js";

describe("config/help", () => {
  const text = helpText();

  it("starts with a usage line", () => {
    expect(text.split("\n")[0]).to.match(/^Usage: cni-repair \[run\] \[flags\]/);
    expect(text.split("\n")[1]).to.match(/^ +cni-repair scan \[flags\]/);
  });

  for (const name of flagNames) {
    it(`documents --${name}`, () => {
      const flag = flags[name];
      const entry = text.slice(text.indexOf(`--${name}${flag.valueName === "" ? "" : " "}`));
      const block = entry.split("\n").slice(0, 3).join("\n");
      expect(block).to.include(`(${flag.type})`);
      expect(block).to.include(flag.help);
      expect(block).to.include(`default: ${flag.defaultText === "" ? '""' : flag.defaultText}`);
      expect(block).to.include(`env: ${envVarName(name) ?? "none"}`);
      if (flag.allowed !== undefined) expect(block).to.include(`allowed: ${flag.allowed}`);
    });
  }

  it("names env vars in upper snake case", () => {
    expect(text).to.include("CNI_REPAIR_MAX_RETRIES");
    expect(text).to.include("CNI_REPAIR_WATCH_STALL_TIMEOUT");
    expect(text).to.include("-h, --help");
    expect(text).to.include("allowed: 0s (off) or 1s-24h");
    expect(text).to.include("allowed: 0-65535");
  });

  it("shows defaults that parse back to the flag's default", () => {
    for (const name of flagNames) {
      const parsed = flags[name].parse(flags[name].defaultText);
      expect(parsed, name).to.deep.equal({ ok: true, value: flags[name].default });
    }
  });
});
