// Unknown CNI_REPAIR_* variables are refused with the closest known name; everything else passes.
import { expect } from "chai";
import { parseConfig } from "../../../src/config/config.js";
import { ConfigError } from "../../../src/config/config-error.js";
import { envVarName, flagNames } from "../../../src/config/flags.js";
import { INTERNAL_ENV_VARS, rejectUnknownEnv } from "../../../src/config/unknown-env.js";

const flagEnvVars = flagNames.flatMap((name) => envVarName(name) ?? []);

function messageOf(env: Record<string, string>): string {
  try {
    parseConfig(["run"], env);
  } catch (error) {
    expect(error).to.be.instanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`parseConfig accepted ${JSON.stringify(env)}`);
}

describe("config/unknown CNI_REPAIR_* variables", () => {
  for (const [typo, meant] of [
    ["CNI_REPAIR_MAX_DELETIONS_PER_MINUT", "CNI_REPAIR_MAX_DELETIONS_PER_MINUTE"],
    ["CNI_REPAIR_MAX_DELETION_PER_MINUTE", "CNI_REPAIR_MAX_DELETIONS_PER_MINUTE"],
    ["CNI_REPAIR_DELETION_BRUST", "CNI_REPAIR_DELETION_BURST"],
    ["CNI_REPAIR_WORKER", "CNI_REPAIR_WORKERS"],
    ["CNI_REPAIR_IN_CLUSTER_ROT", "CNI_REPAIR_IN_CLUSTER_ROOT"],
  ] as const) {
    it(`${typo}: names it and suggests ${meant}`, () => {
      expect(messageOf({ [typo]: "1" })).to.equal(`unknown environment variable ${typo} (did you mean ${meant}?)`);
    });
  }

  it("lists the other unknown ones too, in a stable order", () => {
    expect(messageOf({ CNI_REPAIR_ZZZ: "1", CNI_REPAIR_MODEE: "label", CNI_REPAIR_AAA: "2" })).to.match(
      /^unknown environment variable CNI_REPAIR_AAA \(did you mean \S+\?\); also unknown: CNI_REPAIR_MODEE, CNI_REPAIR_ZZZ$/,
    );
  });

  it("accepts every flag's variable and every internal one, and ignores other prefixes", () => {
    const env = Object.fromEntries(
      [...flagEnvVars, ...INTERNAL_ENV_VARS, "CNI_REPAIRX", "MY_CNI_REPAIR_X"].map((n) => [n, ""]),
    );
    expect(() => rejectUnknownEnv(env, flagEnvVars)).not.to.throw();
  });

  it("does not stop --help or --version", () => {
    expect(parseConfig(["--help"], { CNI_REPAIR_BOGUS: "1" }).command).to.equal("help");
    expect(parseConfig(["--version"], { CNI_REPAIR_BOGUS: "1" }).command).to.equal("version");
  });
});
