// --help is generated from the flag table: the overview lists the subcommands; each subcommand's help lists exactly
// the flags it accepts, under their group's heading, with type, default and env var.

import { expect } from "chai";
import { FLAG_GROUPS, SUBCOMMANDS, type Subcommand } from "../../../src/config/commands.js";
import { envVarName, type FlagName, flagNames, flags } from "../../../src/config/flags.js";
import { helpText } from "../../../src/config/help.js";

/** The flag names listed in a help text, by the heading they are under. */
function flagsByHeading(text: string): Map<string, FlagName[]> {
  const found = new Map<string, FlagName[]>();
  let heading = "";
  for (const line of text.split("\n")) {
    const title = /^(\S[^:]*):$/.exec(line)?.[1];
    if (title !== undefined) heading = title;
    const name = /^ {2}(?:-\w, )?--([a-z0-9-]+)/.exec(line)?.[1];
    if (name !== undefined) found.set(heading, [...(found.get(heading) ?? []), name as FlagName]);
  }
  return found;
}

/** The three lines of one flag's entry. */
function entryOf(text: string, name: FlagName): string {
  const flag = flags[name];
  const start = text.search(new RegExp(`^ {2}(-\\w, )?--${name}${flag.valueName === "" ? " " : " <"}`, "m"));
  expect(start, `--${name}`).to.be.greaterThan(-1);
  return text.slice(start).split("\n").slice(0, 3).join("\n");
}

describe("config/help", () => {
  it("the overview lists every subcommand and only --help and --version", () => {
    const text = helpText();
    expect(text.split("\n")[0]).to.equal("Usage: cni-repair <command> [flags]");
    for (const name of SUBCOMMANDS) expect(text).to.match(new RegExp(`^ {2}${name}\\b`, "m"));
    expect([...flagsByHeading(text).values()].flat()).to.deep.equal(["help", "version"]);
    expect(text).to.match(/^ {2}help \[command\] +this overview, or a command's flags/m);
    expect(text).to.include(
      "Without a command, cni-repair prints this and exits 0: the controller starts only with 'run'.",
    );
    expect(text).to.include("cni-repair help <command>");
  });

  it("says a flag and its variable must agree, and how scan --repair counts the agents' Ready time", () => {
    expect(helpText("run")).to.include("a flag and its variable given with different");
    expect(helpText("scan")).to.include("trusts the kubelet's Ready time of an agent Ready before it started");
    expect(helpText("scan")).to.include("It deletes at most --deletion-burst (the rest: held rate_limit)");
  });

  for (const command of SUBCOMMANDS) {
    describe(`${command} --help`, () => {
      const text = helpText(command);
      const byHeading = flagsByHeading(text);

      it("starts with its usage line and ends with examples", () => {
        expect(text.split("\n")[0]).to.match(new RegExp(`^Usage: cni-repair ${command}`));
        expect(text).to.match(/\nExamples:\n( {2}cni-repair.*\n)+$/);
      });

      it("lists exactly the flags it accepts, each under its group's heading, groups in order", () => {
        const accepted = flagNames.filter((name) => flags[name].commands.includes(command));
        expect([...byHeading.values()].flat().sort()).to.deep.equal([...accepted].sort());
        for (const [heading, names] of byHeading) {
          for (const name of names) expect(flags[name].group, `--${name}`).to.equal(heading);
        }
        const order = [...byHeading.keys()].map((heading) => FLAG_GROUPS.indexOf(heading as never));
        expect(order).to.deep.equal([...order].sort((a, b) => a - b));
        expect(order).to.not.include(-1);
      });

      it("documents each flag's type, help, default, range and env var", () => {
        for (const name of flagNames.filter((n) => flags[n].commands.includes(command))) {
          const flag = flags[name];
          const block = entryOf(text, name);
          expect(block).to.include(`(${flag.type})`);
          expect(block).to.include(flag.help);
          expect(block).to.include(`default: ${flag.defaultText === "" ? '""' : flag.defaultText}`);
          expect(block).to.include(`env: ${envVarName(name) ?? "none"}`);
          if (flag.allowed !== undefined) expect(block).to.include(`allowed: ${flag.allowed}`);
        }
      });
    });
  }

  it("puts one-shot and daemon flags where they belong", () => {
    const headed = (command: Subcommand) => flagsByHeading(helpText(command));
    expect(headed("scan").get("Output")).to.deep.equal(["output"]);
    expect(headed("scan").get("Actions")).to.include("repair");
    expect(headed("run").get("Output")).to.equal(undefined);
    expect(headed("run").get("Leader election")).to.include("leader-election-namespace");
    expect(headed("explain").has("Leader election")).to.equal(false);
    expect(headed("explain").get("Guards")).to.include("max-broken-fraction");
    expect([...headed("version").keys()]).to.deep.equal(["General"]);
  });

  it("names env vars in upper snake case and states the environment rule", () => {
    const text = helpText("run");
    expect(text).to.include("CNI_REPAIR_MAX_RETRIES");
    expect(text).to.include("CNI_REPAIR_WATCH_STALL_TIMEOUT");
    expect(text).to.include("-h, --help");
    expect(text).to.include("allowed: 0s (off) or 1s-24h");
    expect(text).to.include("allowed: 0-65535");
    expect(text).to.include("run refuses a CNI_REPAIR_* variable of a flag it does not accept");
  });

  it("shows defaults that parse back to the flag's default", () => {
    for (const name of flagNames) {
      const parsed = flags[name].parse(flags[name].defaultText);
      expect(parsed, name).to.deep.equal({ ok: true, value: flags[name].default });
    }
  });

  it("gives every flag a group and at least one subcommand", () => {
    for (const name of flagNames) {
      expect(FLAG_GROUPS, name).to.include(flags[name].group);
      expect(flags[name].commands, name).to.not.be.empty;
    }
  });
});
