// A command that exits without reading its input reports its own exit code and message, not the EPIPE of our write
// (an uncaught EPIPE from ctr once failed a real-node test with no word of what ctr said).
import { expect } from "chai";
import { runToEnd } from "../../harness/run-to-end.js";

describe("harness/runToEnd", () => {
  it("returns the exit code and stderr of a command that exits without reading its input", async () => {
    const input = "x".repeat(4 * 1024 * 1024); // more than a pipe holds, so our write is still going when it exits
    const result = await runToEnd("sh", ["-c", "echo refused >&2; exit 3"], { input });
    expect(result).to.deep.equal({ code: 3, stdout: "", stderr: "refused\n" });
  });
});
