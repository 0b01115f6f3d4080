// The audit log is read incrementally (tests poll a log of hundreds of MB): each call must see exactly the complete
// lines written so far, whatever way the bytes were cut between writes, and start over on a new or shorter log.
import { appendFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import fc from "fast-check";
import { auditLines, forgetAuditLog } from "../../harness/audit-log.js";

describe("audit log lines, read incrementally", () => {
  let dir: string;
  let log: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "audit-lines-"));
    log = join(dir, "audit.log");
  });
  afterEach(() => {
    forgetAuditLog(log);
    rmSync(dir, { recursive: true, force: true });
  });

  it("none while the log does not exist", () => {
    expect(auditLines(log)).to.deep.equal([]);
  });

  it("gives the complete lines of any writes, cut anywhere (mid-line, mid-character), as one whole read would", () => {
    const line = fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 }).filter((text) => !text.includes("\n"));
    fc.assert(
      fc.property(fc.array(line, { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 8 }), (lines, cuts) => {
        forgetAuditLog(log);
        writeFileSync(log, "");
        const bytes = Buffer.from(lines.map((text) => `${text}\n`).join(""));
        const at = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
        let from = 0;
        for (const to of [...at, bytes.length]) {
          appendFileSync(log, bytes.subarray(from, to));
          from = to;
          const written = bytes.subarray(0, to).toString("utf8");
          const complete = written
            .slice(0, written.lastIndexOf("\n") + 1)
            .split("\n")
            .slice(0, -1);
          expect(auditLines(log)).to.deep.equal(complete.filter((text) => text !== ""));
        }
      }),
      { numRuns: 300 },
    );
  });

  it("starts over on a log replaced by another file, or cut shorter", () => {
    writeFileSync(log, "a\nb\n");
    expect(auditLines(log)).to.deep.equal(["a", "b"]);
    writeFileSync(join(dir, "other.log"), "c\n");
    renameSync(join(dir, "other.log"), log);
    expect(auditLines(log)).to.deep.equal(["c"]);
    writeFileSync(log, "");
    expect(auditLines(log)).to.deep.equal([]);
    appendFileSync(log, "d\n");
    expect(auditLines(log)).to.deep.equal(["d"]);
  });
});
