// A cursor over protobuf wire format (https://protobuf.dev/programming-guides/encoding/): varints, length-delimited
// fields, and skipping whatever a decoder does not read.
//
// Hand-written rather than protobufjs's Reader (used by the tests as an independent encoder): the decoders here read
// a handful of fields and skip the rest, so the cursor is all they need. protobufjs probes for `long` and Node's
// Buffer through an eval'd require, which the esbuild bundle of the image does not have, so the same code would
// decode strings and 64-bit integers differently in the image than in the tests; and its int64 is a Long object.
// Measured on a 15 KB injected pod (bench/wire/decode-cpu.ts): the walk of this cursor over every field of the pod
// costs no more than protobufjs's Reader doing the same walk.
//
// Every read checks the end of its message: malformed or truncated bytes throw a ProtobufError, never read past
// the message into the next one.

export class ProtobufError extends Error {}

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LENGTH_DELIMITED = 2;
export const WIRE_START_GROUP = 3;
export const WIRE_END_GROUP = 4;
export const WIRE_FIXED32 = 5;

const TWO_TO_32 = 4_294_967_296;

export class ProtobufReader {
  readonly #bytes: Buffer;
  /** The next byte to read. */
  pos: number;

  constructor(bytes: Uint8Array, start = 0) {
    // A Buffer view (no copy) for its fast UTF-8 slice.
    this.#bytes = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.pos = start;
  }

  get length(): number {
    return this.#bytes.length;
  }

  /** The next field's tag (field number << 3 | wire type), or 0 at `end`. */
  tag(end: number): number {
    const pos = this.pos;
    if (pos >= end) return 0;
    // Field numbers 1-15 take one byte: the common case, read without the varint loop.
    const first = this.#bytes[pos] as number;
    if (first < 0x80 && first >= 8) {
      this.pos = pos + 1;
      return first;
    }
    const tag = this.uint32(end);
    if (tag >>> 3 === 0) throw new ProtobufError(`field number 0 at byte ${this.pos}`);
    return tag;
  }

  /** A varint read as an unsigned 32-bit number (the high bits of a longer one are dropped, as protobuf says). */
  uint32(end: number): number {
    const bytes = this.#bytes;
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (this.pos >= end) throw new ProtobufError("truncated varint");
      const byte = bytes[this.pos++] as number;
      value |= (byte & 0x7f) << shift;
      if (byte < 0x80) return value >>> 0;
    }
    // Up to 10 bytes in all (a negative int32 is sign-extended to 64 bits).
    for (let i = 0; i < 5; i++) {
      if (this.pos >= end) throw new ProtobufError("truncated varint");
      if ((bytes[this.pos++] as number) < 0x80) return value >>> 0;
    }
    throw new ProtobufError("varint longer than 10 bytes");
  }

  /** An int32 field: the low 32 bits, signed. */
  int32(end: number): number {
    return this.uint32(end) | 0;
  }

  /** An int64 field as a number (exact within ±2^53, which every Kubernetes timestamp is). */
  int64(end: number): number {
    const bytes = this.#bytes;
    let low = 0;
    let high = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= end) throw new ProtobufError("truncated varint");
      const byte = bytes[this.pos++] as number;
      const bits = byte & 0x7f;
      if (i < 4) low |= bits << (7 * i);
      else if (i === 4) {
        low |= bits << 28;
        high |= bits >>> 4;
      } else high |= bits << (7 * i - 32);
      if (byte < 0x80) return (high | 0) * TWO_TO_32 + (low >>> 0);
    }
    throw new ProtobufError("varint longer than 10 bytes");
  }

  bool(end: number): boolean {
    return this.uint32(end) !== 0;
  }

  /** A length-delimited field's end (its bytes are [pos, returned end)). */
  delimitedEnd(end: number): number {
    const pos = this.pos;
    // Lengths under 128 take one byte (most strings here): read without the varint loop.
    const first = pos < end ? (this.#bytes[pos] as number) : 0x80;
    let length: number;
    if (first < 0x80) {
      this.pos = pos + 1;
      length = first;
    } else length = this.uint32(end);
    const fieldEnd = this.pos + length;
    if (fieldEnd > end) throw new ProtobufError(`field of ${length} bytes runs past its message`);
    return fieldEnd;
  }

  string(end: number): string {
    const fieldEnd = this.delimitedEnd(end);
    // No encoding named: Buffer#toString's shortest path to UTF-8 (the named one looks the encoding up each call).
    const text = this.#bytes.toString(undefined, this.pos, fieldEnd);
    this.pos = fieldEnd;
    return text;
  }

  /** A string field, after checking its tag's wire type. */
  stringField(tag: number, end: number): string {
    this.expect(tag, WIRE_LENGTH_DELIMITED);
    return this.string(end);
  }

  /** A bytes field as a view into the same memory (no copy). */
  bytes(end: number): Buffer {
    const fieldEnd = this.delimitedEnd(end);
    const view = this.#bytes.subarray(this.pos, fieldEnd);
    this.pos = fieldEnd;
    return view;
  }

  /**
   * The UTF-8 length of the key of the map entry that fills [pos, end), when the entry is laid out as protobuf's
   * encoders write one: its key (field 1, under 128 bytes), then its value (field 2), nothing else. -1 for any other
   * layout, which the caller reads field by field. Lets a reader pass over an entry it does not want with a few
   * byte reads, where the field-by-field walk makes a dozen calls (the per-node start runs this in the interpreter).
   */
  canonicalKeyLength(end: number): number {
    const bytes = this.#bytes;
    const pos = this.pos;
    // Tag 0x0a: field 1, length-delimited.
    if (pos + 2 > end || bytes[pos] !== 0x0a) return -1;
    const keyLength = bytes[pos + 1] as number;
    if (keyLength >= 0x80) return -1;
    let at = pos + 2 + keyLength;
    // Tag 0x12: field 2, length-delimited.
    if (at >= end || bytes[at] !== 0x12) return -1;
    at++;
    let valueLength = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (at >= end) return -1;
      const byte = bytes[at++] as number;
      valueLength += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return at + valueLength === end ? keyLength : -1;
    }
    return -1;
  }

  /** Skips the value of a field of this wire type (a field this decoder does not read, known or future). */
  skip(wireType: number, end: number): void {
    switch (wireType) {
      case WIRE_VARINT:
        this.uint32(end);
        return;
      case WIRE_FIXED64:
        this.#advance(8, end);
        return;
      case WIRE_LENGTH_DELIMITED:
        this.pos = this.delimitedEnd(end);
        return;
      case WIRE_FIXED32:
        this.#advance(4, end);
        return;
      case WIRE_START_GROUP:
        this.#skipGroup(end);
        return;
      default:
        throw new ProtobufError(`wire type ${wireType} at byte ${this.pos}`);
    }
  }

  /** Throws unless the field has the wire type its definition gives it. */
  expect(tag: number, wireType: number): void {
    if ((tag & 7) !== wireType) {
      throw new ProtobufError(`field ${tag >>> 3} has wire type ${tag & 7}, not ${wireType}`);
    }
  }

  #advance(count: number, end: number): void {
    if (this.pos + count > end) throw new ProtobufError("truncated fixed-width field");
    this.pos += count;
  }

  // Groups are deprecated and Kubernetes has none, but a reader that skips unknown fields must get past them.
  #skipGroup(end: number): void {
    for (;;) {
      const tag = this.tag(end);
      if (tag === 0) throw new ProtobufError("group without its end");
      if ((tag & 7) === WIRE_END_GROUP) return;
      this.skip(tag & 7, end);
    }
  }
}
