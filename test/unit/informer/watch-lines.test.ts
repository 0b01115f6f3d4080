// Unit and property tests for readWatchEvents: NDJSON bytes to watch events, whatever the chunk boundaries.

import { Readable } from "node:stream";
import { expect } from "chai";
import fc from "fast-check";
import { readWatchEvents, type WatchEvent } from "../../../src/informer/watch-lines.js";
import { splitAt } from "../../support/split-bytes.js";

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

/** A body that delivers exactly these chunks (empty ones included), then ends. */
const chunksOf = (chunks: readonly Uint8Array[]): Readable => Readable.from(chunks);

async function collect(chunks: readonly Uint8Array[]): Promise<{ events: WatchEvent[]; chunkCalls: number }> {
  let chunkCalls = 0;
  const events: WatchEvent[] = [];
  await readWatchEvents(
    chunksOf(chunks),
    () => chunkCalls++,
    (event) => events.push(event),
  );
  return { events, chunkCalls };
}

async function collectError(chunks: readonly Uint8Array[]): Promise<{ events: WatchEvent[]; error: unknown }> {
  const events: WatchEvent[] = [];
  try {
    await readWatchEvents(
      chunksOf(chunks),
      () => {},
      (event) => events.push(event),
    );
  } catch (error) {
    return { events, error };
  }
  return { events, error: undefined };
}

/** Every way to cut `text` into two chunks (by byte offset). */
const allTwoWaySplits = (text: string): Uint8Array[][] => {
  const bytes = utf8(text);
  return Array.from({ length: bytes.length + 1 }, (_, i) => splitAt(bytes, [i]));
};

const added = { type: "ADDED", object: { metadata: { name: "a", resourceVersion: "1" } } };
const modified = { type: "MODIFIED", object: { metadata: { name: "b", resourceVersion: "2" } } };
const ndjson = (...events: unknown[]): string => events.map((e) => `${JSON.stringify(e)}\n`).join("");

describe("informer/readWatchEvents", () => {
  it("yields one event per line, keeping type and object", async () => {
    const { events } = await collect([utf8(ndjson(added, modified))]);
    expect(events).to.deep.equal([added, modified]);
  });

  it("yields nothing for an empty body or only blank lines", async () => {
    expect((await collect([])).events).to.deep.equal([]);
    expect((await collect([utf8("")])).events).to.deep.equal([]);
    expect((await collect([utf8("\n\n  \r\n\t\n")])).events).to.deep.equal([]);
  });

  it("skips empty and whitespace-only lines between events", async () => {
    const text = `\n${JSON.stringify(added)}\n\n   \n\r\n${JSON.stringify(modified)}\n\n`;
    expect((await collect([utf8(text)])).events).to.deep.equal([added, modified]);
  });

  it("yields a final line that has no newline", async () => {
    const text = `${JSON.stringify(added)}\n${JSON.stringify(modified)}`;
    expect((await collect([utf8(text)])).events).to.deep.equal([added, modified]);
  });

  it("accepts \\r\\n line ends, also when a chunk boundary falls between \\r and \\n", async () => {
    const text = `${JSON.stringify(added)}\r\n${JSON.stringify(modified)}\r\n`;
    for (const chunks of allTwoWaySplits(text)) {
      expect((await collect(chunks)).events).to.deep.equal([added, modified]);
    }
  });

  it("reassembles an event split at every byte offset", async () => {
    const text = ndjson(added, modified);
    for (const chunks of allTwoWaySplits(text)) {
      expect((await collect(chunks)).events).to.deep.equal([added, modified]);
    }
  });

  it("reassembles multi-byte UTF-8 characters cut inside their bytes", async () => {
    // 2-, 3- and 4-byte characters (é, 日, 🚀, 𝄞): a cut can fall after any byte of each.
    const event = { type: "ADDED", object: { metadata: { name: "é日🚀", annotations: { note: "ünïcödé ✓ 𝄞" } } } };
    const text = ndjson(event, added);
    for (const chunks of allTwoWaySplits(text)) {
      expect((await collect(chunks)).events).to.deep.equal([event, added]);
    }
    // One byte per chunk: every character is cut everywhere it can be.
    const bytes = utf8(text);
    const oneByte = Array.from(bytes, (b) => Uint8Array.of(b));
    expect((await collect(oneByte)).events).to.deep.equal([event, added]);
  });

  it("handles many events in one chunk and one event across many chunks", async () => {
    const many = Array.from({ length: 50 }, (_, i) => ({ type: "MODIFIED", object: { i } }));
    expect((await collect([utf8(ndjson(...many))])).events).to.deep.equal(many);
    const big = { type: "ADDED", object: { data: "x".repeat(10_000) } };
    const bytes = utf8(ndjson(big));
    const cuts = Array.from({ length: 40 }, (_, i) => i * 257);
    expect((await collect(splitAt(bytes, cuts))).events).to.deep.equal([big]);
  });

  it("leaves object undefined when the event has none, and passes any type string through", async () => {
    const { events } = await collect([utf8('{"type":"BOOKMARK"}\n{"type":"ERROR","object":{"code":410}}\n')]);
    expect(events).to.deep.equal([
      { type: "BOOKMARK", object: undefined },
      { type: "ERROR", object: { code: 410 } },
    ]);
  });

  it("drops fields other than type and object", async () => {
    const { events } = await collect([utf8('{"type":"ADDED","object":1,"extra":true}\n')]);
    expect(events).to.deep.equal([{ type: "ADDED", object: 1 }]);
    expect(Object.keys(events[0] ?? {})).to.deep.equal(["type", "object"]);
  });

  it("calls onChunk once per chunk, empty chunks included", async () => {
    const chunks = splitAt(utf8(ndjson(added, modified)), [0, 0, 5, 30, 30]);
    expect(chunks).to.have.length(6);
    const { chunkCalls } = await collect(chunks);
    expect(chunkCalls).to.equal(6);
    expect((await collect([])).chunkCalls).to.equal(0);
  });

  it("calls onChunk before yielding the events that chunk completes", async () => {
    const log: string[] = [];
    const chunks = [utf8(JSON.stringify(added).slice(0, 10)), utf8(`${JSON.stringify(added).slice(10)}\n`)];
    await readWatchEvents(
      chunksOf(chunks),
      () => log.push("chunk"),
      (event) => log.push(event.type),
    );
    expect(log).to.deep.equal(["chunk", "chunk", "ADDED"]);
  });

  it("stops at the event whose handler calls stop: no later event of the same chunk, and the body is destroyed", async () => {
    const body = chunksOf([utf8(ndjson(added, modified, added))]);
    const seen: string[] = [];
    await readWatchEvents(
      body,
      () => {},
      (event, stop) => {
        seen.push(event.type);
        if (event.type === "MODIFIED") stop();
      },
    );
    expect(seen).to.deep.equal(["ADDED", "MODIFIED"]);
    expect(body.destroyed).to.equal(true);
  });

  it("rejects with what the handler throws, and destroys the body", async () => {
    const body = chunksOf([utf8(ndjson(added)), utf8(ndjson(modified))]);
    const thrown = new Error("handler says no");
    const seen: string[] = [];
    const error = await readWatchEvents(
      body,
      () => {},
      (event) => {
        seen.push(event.type);
        throw thrown;
      },
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.equal(thrown);
    expect(seen).to.deep.equal(["ADDED"]);
    expect(body.destroyed).to.equal(true);
  });

  it("rejects with the body's own error, after the events before it", async () => {
    const failing = new Readable({ read() {} });
    const events: WatchEvent[] = [];
    const reading = readWatchEvents(
      failing,
      () => {},
      (event) => events.push(event),
    );
    failing.push(utf8(ndjson(added)));
    setImmediate(() => failing.destroy(new Error("connection reset")));
    const error = await reading.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as Error).message).to.equal("connection reset");
    expect(events).to.deep.equal([added]);
  });

  it("throws on a line that is not JSON, after yielding the lines before it", async () => {
    const { events, error } = await collectError([
      utf8(`${JSON.stringify(added)}\nnot json\n${JSON.stringify(modified)}\n`),
    ]);
    expect(events).to.deep.equal([added]);
    expect(error).to.be.instanceOf(SyntaxError);
  });

  it("throws on a truncated final line", async () => {
    const { events, error } = await collectError([utf8(`${JSON.stringify(added)}\n{"type":"ADD`)]);
    expect(events).to.deep.equal([added]);
    expect(error).to.be.instanceOf(SyntaxError);
  });

  for (const line of ["null", "[]", "42", '"ADDED"', "{}", '{"type":5}', '{"object":{}}', '{"type":null}']) {
    it(`throws on valid JSON that is not an event: ${line}`, async () => {
      const { error } = await collectError([utf8(`${line}\n`)]);
      expect(error).to.be.instanceOf(Error);
      expect((error as Error).message).to.match(/^watch stream line is not an event: /);
      expect((error as Error).message).to.include(line);
    });
  }

  it("quotes at most 200 characters of a bad line in the error", async () => {
    const line = JSON.stringify({ kind: "x".repeat(1000) });
    const { error } = await collectError([utf8(`${line}\n`)]);
    const message = (error as Error).message;
    expect(message).to.equal(`watch stream line is not an event: ${line.slice(0, 200)}`);
  });

  describe("property", () => {
    const eventArb = fc.record({
      type: fc.oneof(fc.constantFrom("ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"), fc.string()),
      object: fc.jsonValue({ maxDepth: 3, stringUnit: "binary" }),
    });
    const separatorArb = fc.constantFrom("\n", "\r\n");
    const lineArb = fc.record({
      event: eventArb,
      separator: separatorArb,
      blankAfter: fc.constantFrom("", "\n", "  \n", "\r\n", "\t\r\n\n"),
    });

    it("yields the same events for any split of a valid NDJSON byte string", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(lineArb, { maxLength: 8 }),
          fc.boolean(),
          fc.array(fc.nat(), { maxLength: 12 }),
          async (lines, finalNewline, rawCuts) => {
            let text = "";
            lines.forEach(({ event, separator, blankAfter }, i) => {
              text += JSON.stringify(event);
              const last = i === lines.length - 1;
              if (!last || finalNewline) text += separator + blankAfter;
            });
            const bytes = utf8(text);
            // The reference: what the whole text means when parsed line by line.
            const expected = lines.map(({ event }) => JSON.parse(JSON.stringify(event)) as unknown);
            const cuts = rawCuts.map((c) => c % (bytes.length + 1));
            const chunks = splitAt(bytes, cuts);
            const { events, chunkCalls } = await collect(chunks);
            expect(events).to.deep.equal(expected);
            expect(chunkCalls).to.equal(chunks.length);
          },
        ),
        { numRuns: 300 },
      );
    });
  });
});
