// exitWhenDrained: a finished process ends though a handle lingers, but never before its output has left it: a real
// pipe to a reader that starts late gets every byte.
import { spawn } from "node:child_process";
import { EventEmitter } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { expect } from "chai";
import { exitWhenDrained } from "../../../src/cli/exit-when-drained.js";
import { repositoryFile } from "../../harness/binaries.js";

const MODULE = pathToFileURL(repositoryFile("dist/src/cli/exit-when-drained.js")).href;

/** Runs `body` in a Node process with exitWhenDrained imported; reads its stdout only after `readAfterMs`. */
async function runScript(body: string, readAfterMs: number): Promise<{ code: number | null; bytes: number }> {
  const script = `import { exitWhenDrained } from ${JSON.stringify(MODULE)};\n${body}`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const closed = new Promise((resolve) => child.stdout.once("close", resolve));
  child.stdout.pause();
  await sleep(readAfterMs);
  let bytes = 0;
  child.stdout.on("data", (chunk: Buffer) => {
    bytes += chunk.length;
  });
  child.stdout.resume();
  const [code] = await Promise.all([exited, closed]);
  return { code, bytes };
}

/** A stream stand-in: `pending` bytes not yet written, and drain when the test says. */
class FakeOutput extends EventEmitter {
  writableLength = 0;
}

describe("exitWhenDrained", () => {
  it("ends a process that a handle keeps alive, after the linger, with the exit code already set", async () => {
    const { code } = await runScript(
      "setInterval(() => {}, 1000);\nprocess.exitCode = 3;\nexitWhenDrained(undefined, undefined, 100);",
      0,
    );
    expect(code).to.equal(3);
  });

  it("waits for a pipe whose reader starts late: every byte of 4 MiB arrives", async function () {
    this.timeout(20_000);
    const size = 4 * 1024 * 1024;
    const { code, bytes } = await runScript(
      `process.stdout.write("x".repeat(${size}));\nsetInterval(() => {}, 1000);\nexitWhenDrained(undefined, undefined, 50);`,
      1_000,
    );
    expect(bytes).to.equal(size);
    expect(code).to.equal(0);
  });

  it("arms the timer only once every stream has drained", async () => {
    const stdout = new FakeOutput();
    const stderr = new FakeOutput();
    stdout.writableLength = 10;
    stderr.writableLength = 5;
    let exits = 0;
    exitWhenDrained(() => exits++, [stdout, stderr], 0);
    await sleep(20);
    expect(exits).to.equal(0);
    stdout.writableLength = 0;
    stdout.emit("drain");
    await sleep(20);
    expect(exits, "stderr still busy").to.equal(0);
    stderr.writableLength = 0;
    stderr.emit("drain");
    await sleep(20);
    expect(exits).to.equal(1);
  });
});
