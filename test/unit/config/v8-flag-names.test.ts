// --v8-flags names a flag V8 does not know (V8 itself would only print a line and go on without it).
import { execFileSync } from "node:child_process";
import { expect } from "chai";
import { INSTALLED_V8_FLAGS, isV8Flag, listedV8Flags, v8FlagName } from "../../../src/config/v8-flag-names.js";

describe("V8 flag names", () => {
  it("reads the name V8 lists a flag under: negation, value and underscores dropped", () => {
    expect(["--no-opt", "--opt", "--max_lazy=1", "--no-max-lazy"].map(v8FlagName)).to.deep.equal([
      "opt",
      "opt",
      "max-lazy",
      "max-lazy",
    ]);
  });

  it("reads every name from node --v8-options' layout", () => {
    const listed = listedV8Flags(
      "Options:\n  --maglev (enable the maglev optimizing compiler)\n        type: bool\n  --stack-size (x)\n",
    );
    expect([...listed]).to.deep.equal(["maglev", "stack-size"]);
  });

  it("knows this Node's flags, installed or not, and refuses a made-up one", () => {
    for (const flag of ["--no-opt", "--no-maglev", "--single-threaded-gc", "--stack-size=900", "--no-flush-bytecode"]) {
      expect(isV8Flag(flag), flag).to.equal(true);
    }
    expect(isV8Flag("--no-such-v8-flag")).to.equal(false);
  });

  it("takes the installs' names without asking V8 only because this Node lists each of them", () => {
    const listed = listedV8Flags(execFileSync(process.execPath, ["--v8-options"], { encoding: "utf8" }));
    for (const name of INSTALLED_V8_FLAGS) expect(listed.has(name), name).to.equal(true);
  });
});
