// Abandoned test directories are swept, but never one that a concurrent test process has just created and not yet
// stamped with its owner (it lost its control plane's files to that race under load). A process's own directories
// go when it exits, so a passing `make test` leaves nothing in the temporary folder.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { expect } from "chai";
import { removeAbandonedDirs } from "../../harness/owned-dirs.js";

const PREFIX = `cni-repair-owned-dirs-unit-${process.pid}-`;

describe("harness/owned-dirs", () => {
  it("keeps a fresh directory with no owner yet, removes an old one and one whose owner is gone", () => {
    const fresh = mkdtempSync(join(tmpdir(), PREFIX));
    const old = mkdtempSync(join(tmpdir(), PREFIX));
    const longAgo = new Date(Date.now() - 10 * 60_000);
    utimesSync(old, longAgo, longAgo);
    const orphaned = mkdtempSync(join(tmpdir(), PREFIX));
    writeFileSync(join(orphaned, "owner.pid"), "999999999");
    const mine = mkdtempSync(join(tmpdir(), PREFIX));
    writeFileSync(join(mine, "owner.pid"), String(process.pid));
    mkdirSync(join(mine, "data"));

    removeAbandonedDirs(PREFIX);

    expect(existsSync(fresh), "being created by another run").to.equal(true);
    expect(existsSync(old), "a run that died before stamping it").to.equal(false);
    expect(existsSync(orphaned), "its owner is gone").to.equal(false);
    expect(existsSync(mine), "its owner is alive").to.equal(true);
    removeAbandonedDirs(PREFIX); // no-op for the live ones
    for (const dir of [fresh, mine]) utimesSync(dir, longAgo, longAgo);
    writeFileSync(join(mine, "owner.pid"), "999999999");
    removeAbandonedDirs(PREFIX);
    expect(existsSync(fresh) || existsSync(mine), "both abandoned now").to.equal(false);
  });

  it("removes the directories a process owns when it exits", () => {
    const harness = pathToFileURL(join(import.meta.dirname, "../../harness/owned-dirs.js")).href;
    const script = `import { ownedTempDir } from ${JSON.stringify(harness)}; console.log(ownedTempDir(${JSON.stringify(PREFIX)}));`;
    const dir = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" }).trim();
    expect(dir.startsWith(join(tmpdir(), PREFIX)), dir).to.equal(true);
    expect(existsSync(dir), "removed at exit").to.equal(false);
  });
});
