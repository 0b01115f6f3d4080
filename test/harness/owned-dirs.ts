// Temporary directories owned by this test process: abandoned ones (their owner died, even by SIGKILL) are
// removed by the next run, and live ones are removed when the process exits.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const OWNER_FILE = "owner.pid";
/** A directory with no owner file yet is another run's, between mkdtemp and writing the file, unless this old. */
const UNOWNED_GRACE_MS = 60_000;

const ownedDirs = new Set<string>();

/**
 * Removes abandoned directories with this prefix, then makes a new one owned by this process, removed when it
 * exits, after the resources given to destroyOnExit (the servers that may still be writing in it).
 */
export function ownedTempDir(prefix: string): string {
  removeAbandonedDirs(prefix);
  const dir = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(join(dir, OWNER_FILE), String(process.pid));
  ownedDirs.add(dir);
  return dir;
}

/** Removes directories of earlier runs whose owner process is gone (its servers died with it: pdeathsig). */
export function removeAbandonedDirs(prefix: string): void {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(prefix)) continue;
    const dir = join(tmpdir(), name);
    let owner = Number.NaN;
    try {
      owner = Number(readFileSync(join(dir, OWNER_FILE), "utf8"));
    } catch {
      // No owner file: a run that died while creating it, or one creating it right now (a concurrent test process).
      if (!isOlderThan(dir, UNOWNED_GRACE_MS)) continue;
    }
    if (Number.isInteger(owner) && owner > 0 && isAlive(owner)) continue;
    rmSync(dir, { recursive: true, force: true });
  }
}

function isOlderThan(path: string, ageMs: number): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs > ageMs;
  } catch {
    return false; // already gone
  }
}

/** True while the process exists and is not a zombie waiting to be reaped. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    // The state letter follows the parenthesised command name in /proc/<pid>/stat.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

type Destroyable = { destroyNow(): void };
const live = new Set<Destroyable>();
process.on("exit", () => {
  for (const resource of live) resource.destroyNow();
  for (const dir of ownedDirs) rmSync(dir, { recursive: true, force: true });
});

/** Kills and removes the resource on process exit, until `released`. Synchronous, as exit handlers must be. */
export function destroyOnExit(resource: Destroyable): { released(): void } {
  live.add(resource);
  return { released: () => live.delete(resource) };
}
