// The machine the figures were measured on, for the report.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";

export type Machine = {
  readonly cpus: number;
  readonly cpuModel: string;
  readonly memoryGiB: number;
  readonly node: string;
  readonly kernel: string;
  readonly loadAverage: readonly number[];
  readonly gitCommit: string;
  readonly gitDirty: boolean;
};

export function describeMachine(): Machine {
  const git = (args: string[]) => {
    try {
      return execFileSync("git", args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    } catch {
      return "";
    }
  };
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? "unknown",
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    kernel: readFileSync("/proc/sys/kernel/osrelease", "utf8").trim(),
    loadAverage: loadavg().map((v) => Math.round(v * 100) / 100),
    gitCommit: git(["rev-parse", "--short", "HEAD"]),
    gitDirty: git(["status", "--porcelain", "--", "src"]) !== "",
  };
}
