// docs/flags.md must be exactly what `make docs` would write from the current help screens.
import { readFileSync } from "node:fs";
import { expect } from "chai";
import { flagNames } from "../../../src/config/flags.js";
import { cliHelp, FLAGS_REFERENCE_PATH, REGENERATE_COMMAND, renderFlagsReference } from "../../docs/flags-reference.js";

describe("docs/flags.md", () => {
  const committed = readFileSync(FLAGS_REFERENCE_PATH, "utf8");

  it(`is the current --help (run '${REGENERATE_COMMAND}' after changing a flag)`, function () {
    this.timeout(60_000); // starts the CLI as its own process: slow on a loaded machine
    expect(committed).to.equal(renderFlagsReference(cliHelp()));
  });

  it("names every flag", () => {
    for (const name of flagNames) expect(committed).to.include(`--${name}`);
  });
});
