// The wire cursor against protobufjs's Writer: varints of every width (int32 sign-extended to 10 bytes, int64 both
// signs), strings, skipping every wire type; and malformed bytes throw instead of reading past their message.
import { expect } from "chai";
import fc from "fast-check";
import protobuf from "protobufjs/minimal.js";
import { ProtobufError, ProtobufReader } from "../../../src/kube/protobuf-reader.js";

const { Writer } = protobuf;
const read = (bytes: Uint8Array) => new ProtobufReader(bytes);

describe("kube/ProtobufReader", () => {
  it("reads int32, int64 (exact within ±2^53), bool and strings as protobufjs writes them", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
        fc.maxSafeInteger(),
        fc.boolean(),
        fc.string({ unit: "grapheme" }),
        (i32, i64, flag, text) => {
          const bytes = Writer.create().int32(i32).int64(i64).bool(flag).string(text).finish();
          const reader = read(bytes);
          expect(reader.int32(bytes.length)).to.equal(i32);
          expect(reader.int64(bytes.length)).to.equal(i64);
          expect(reader.bool(bytes.length)).to.equal(flag);
          expect(reader.string(bytes.length)).to.equal(text);
          expect(reader.pos).to.equal(bytes.length);
        },
      ),
    );
  });

  it("skips a field of every wire type, groups (nested) included", () => {
    const w = Writer.create();
    w.uint32((1 << 3) | 0).uint64(2 ** 50);
    w.uint32((2 << 3) | 1).fixed64(5);
    w.uint32((3 << 3) | 2).string("skipped");
    w.uint32((4 << 3) | 3);
    w.uint32((5 << 3) | 3)
      .uint32((6 << 3) | 0)
      .uint32(1)
      .uint32((5 << 3) | 4);
    w.uint32((4 << 3) | 4);
    w.uint32((7 << 3) | 5).fixed32(9);
    w.uint32((8 << 3) | 2).string("kept");
    const bytes = w.finish();
    const reader = read(bytes);
    for (let tag = reader.tag(bytes.length); tag !== 0; tag = reader.tag(bytes.length)) {
      if (tag >>> 3 === 8) expect(reader.string(bytes.length)).to.equal("kept");
      else reader.skip(tag & 7, bytes.length);
    }
    expect(reader.pos).to.equal(bytes.length);
  });

  it("throws on a truncated varint, a length past its message, a bad wire type or field number 0", () => {
    const cases: [string, number[], (r: ProtobufReader, end: number) => unknown][] = [
      ["truncated varint", [0x80, 0x80], (r, end) => r.uint32(end)],
      ["varint of 11 bytes", Array(10).fill(0xff).concat([1]), (r, end) => r.int64(end)],
      ["length past the end", [(1 << 3) | 2, 5, 0x61], (r, end) => r.skip(r.tag(end) & 7, end)],
      ["wire type 6", [(1 << 3) | 6, 0], (r, end) => r.skip(r.tag(end) & 7, end)],
      ["field number 0", [0x02, 0], (r, end) => r.tag(end)],
      ["a group without its end", [(1 << 3) | 3, 0x08, 1], (r, end) => r.skip(r.tag(end) & 7, end)],
    ];
    for (const [name, bytes, readIt] of cases) {
      expect(() => readIt(read(Uint8Array.from(bytes)), bytes.length), name).to.throw(ProtobufError);
    }
  });

  it("canonicalKeyLength: the key's length of an entry laid out key then value, -1 for any other layout", () => {
    type Field = { no: number; text: string };
    const layout = fc.array(
      fc.record({ no: fc.constantFrom(1, 2, 3), text: fc.string({ unit: "grapheme", maxLength: 140 }) }),
      { maxLength: 4 },
    );
    const expected = (fields: Field[]): number => {
      const [key, value] = fields;
      const keyLength = key === undefined ? -1 : Buffer.byteLength(key.text);
      return fields.length === 2 && key?.no === 1 && value?.no === 2 && keyLength < 128 ? keyLength : -1;
    };
    fc.assert(
      fc.property(layout, fc.nat(3), (fields, lead) => {
        const w = Writer.create();
        // Bytes before the entry, so its position is not 0.
        for (let i = 0; i < lead; i++) w.uint32((9 << 3) | 0).uint32(i);
        const start = w.len;
        for (const { no, text } of fields) w.uint32((no << 3) | 2).string(text);
        const end = w.len;
        // Bytes after it, which the reader must not count as the entry's.
        w.uint32((1 << 3) | 2).string("next");
        const reader = read(w.finish());
        reader.pos = start;
        expect(reader.canonicalKeyLength(end)).to.equal(expected(fields));
        expect(reader.pos, "the position is left as it was").to.equal(start);
      }),
      { numRuns: 500 },
    );
    // A value's length cut off by the entry's end, and a value running past it: not an entry encoders write.
    expect(read(Uint8Array.from([0x0a, 1, 0x61, 0x12, 0x80])).canonicalKeyLength(5)).to.equal(-1);
    expect(read(Uint8Array.from([0x0a, 1, 0x61, 0x12, 3, 0x62])).canonicalKeyLength(6)).to.equal(-1);
  });

  it("never reads past the end it is given, even when the bytes go on", () => {
    const bytes = Writer.create()
      .uint32((1 << 3) | 2)
      .string("abcdef")
      .finish();
    const reader = read(bytes);
    const tag = reader.tag(4);
    expect(() => reader.skip(tag & 7, 4)).to.throw(ProtobufError);
  });
});
