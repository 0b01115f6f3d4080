// createLogger/flushLogger: JSON and text lines on a provided stream, and a flush that waits for the bytes.

import { Writable } from "node:stream";
import { expect } from "chai";
import { createLogger, flushLogger } from "../../../src/observe/logger.js";

/** Collects written lines; each write completes after `delayMs`, like a slow pipe or file. */
class LineSink extends Writable {
  readonly lines: string[] = [];
  readonly #delayMs: number;
  #partial = "";

  constructor(delayMs = 0) {
    super();
    this.#delayMs = delayMs;
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    const finish = () => {
      const text = this.#partial + chunk.toString("utf8");
      const parts = text.split("\n");
      this.#partial = parts.pop() ?? "";
      this.lines.push(...parts);
      done();
    };
    if (this.#delayMs > 0) setTimeout(finish, this.#delayMs);
    else finish();
  }
}

describe("observe/logger", () => {
  it("writes JSON lines with timestamp, level, msg, component and fields, in that order", async () => {
    const sink = new LineSink();
    const logger = createLogger({ level: "info", format: "json", stream: sink });
    logger.child({ component: "reconciler" }).info("deleted broken pod", { namespace: "foo", pod: "bar", uid: "u-1" });
    logger.debug("not at info level");
    await flushLogger(logger);

    expect(sink.lines).to.have.length(1);
    const line = JSON.parse(sink.lines[0] ?? "") as Record<string, unknown>;
    expect(Object.keys(line)).to.deep.equal(["timestamp", "level", "msg", "component", "namespace", "pod", "uid"]);
    expect(line).to.include({
      level: "info",
      msg: "deleted broken pod",
      component: "reconciler",
      namespace: "foo",
      pod: "bar",
      uid: "u-1",
    });
    expect(new Date(String(line.timestamp)).toISOString()).to.equal(line.timestamp);
  });

  it("does not format a line below its level, in the logger or its children; at that level it writes it", async () => {
    let formatted = 0;
    const field = {
      toJSON: () => {
        formatted++;
        return "field";
      },
    };
    const sink = new LineSink();
    const logger = createLogger({ level: "info", format: "json", stream: sink });
    const child = logger.child({ component: "reconciler" });
    expect(logger.debug("dropped", { field })).to.equal(logger);
    expect(child.debug("dropped", { field })).to.equal(child);
    child.verbose("dropped", { field });
    child.info("kept", { field });
    await flushLogger(logger);
    expect(sink.lines.map((line) => (JSON.parse(line) as { msg: string }).msg)).to.deep.equal(["kept"]);
    expect(formatted, "only the info line's field").to.equal(1);
    expect(logger.isDebugEnabled()).to.equal(false);

    const debugSink = new LineSink();
    const debugLogger = createLogger({ level: "debug", format: "text", stream: debugSink });
    debugLogger.child({ component: "reconciler" }).debug("kept at debug", { field });
    debugLogger.silly("dropped");
    await flushLogger(debugLogger);
    expect(debugSink.lines).to.have.length(1);
    expect(debugSink.lines[0]).to.match(/ debug \[reconciler\] kept at debug field=/);
  });

  it("serialises errors, bigints and cycles in JSON fields", async () => {
    const sink = new LineSink();
    const logger = createLogger({ level: "debug", format: "json", stream: sink });
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic.self = cyclic;
    const err = Object.assign(new Error("conflict"), { code: 409 });
    logger.warn("delete failed", { err, big: 10n, cyclic });
    await flushLogger(logger);

    const line = JSON.parse(sink.lines[0] ?? "") as {
      err: { message: string; code: number; stack: string };
      big: string;
      cyclic: { self: string };
    };
    expect(line.err.message).to.equal("conflict");
    expect(line.err.code).to.equal(409);
    expect(line.err.stack).to.include("Error: conflict");
    expect(line.big).to.equal("10");
    expect(line.cyclic.self).to.equal("[Circular]");
  });

  it("writes one readable text line per entry", async () => {
    const sink = new LineSink();
    const logger = createLogger({ level: "debug", format: "text", stream: sink });
    const log = logger.child({ component: "reconciler" });
    log.info("deleted broken pod", { namespace: "foo", pod: "bar", uid: "u-1" });
    log.debug("skipped", { reason: "not broken any more", attempts: 2, labels: { app: "x" } });
    logger.error("no component\nsecond line");
    await flushLogger(logger);

    expect(sink.lines).to.have.length(3);
    expect(sink.lines[0]).to.match(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z info {2}\[reconciler\] deleted broken pod namespace=foo pod=bar uid=u-1$/,
    );
    expect(sink.lines[1]).to.match(
      /Z debug \[reconciler\] skipped reason="not broken any more" attempts=2 labels=\{"app":"x"\}$/,
    );
    expect(sink.lines[2]).to.match(/Z error no component\\nsecond line$/);
  });

  it("flushLogger waits until a slow stream has every earlier line, and the logger stays usable", async () => {
    const sink = new LineSink(20);
    const logger = createLogger({ level: "info", format: "json", stream: sink });
    const child = logger.child({ component: "main" });
    for (let i = 0; i < 5; i++) child.info("line", { i });
    await flushLogger(child);
    expect(sink.lines.map((l) => (JSON.parse(l) as { i: number }).i)).to.deep.equal([0, 1, 2, 3, 4]);

    child.info("after flush", { i: 5 });
    await flushLogger(logger);
    expect(sink.lines).to.have.length(6);
  });
});
