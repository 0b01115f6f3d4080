// Which objects of a collection are read as Kubernetes protobuf, and what a reader does with one it cannot read.
import { decodePod, type PodProjection, podKeyOf } from "./pod-protobuf.js";
import { openEnvelope, readStatusMessage } from "./protobuf-envelope.js";

export type ObjectKey = { readonly namespace: string; readonly name: string };

/** The protobuf decoding of one kind: its message to the JSON-shaped view the transform reads. */
export type ProtobufObjects = {
  /** The kind the envelope names ("Pod"). */
  readonly kind: string;
  /** Throws on bytes it cannot read. */
  decode(message: Buffer): unknown;
  /** The object's key from bytes `decode` refused, when its metadata still reads. */
  keyOf(message: Buffer): ObjectKey | undefined;
};

/**
 * What a list or watch hands on for an object the decoder could not read: its key (for a GET of it as JSON) and
 * why. Without a key the reader cannot fetch it alone, and the whole collection goes back to JSON.
 */
export class UndecodableObject {
  readonly key: ObjectKey | undefined;
  readonly error: unknown;

  constructor(key: ObjectKey | undefined, error: unknown) {
    this.key = key;
    this.error = error;
  }
}

export const podObjects = (projection: PodProjection): ProtobufObjects => ({
  kind: "Pod",
  decode: (message) => decodePod(message, projection),
  keyOf: podKeyOf,
});

/** A list item (a bare message, no envelope): the decoded view, or an UndecodableObject. */
export function decodeItem(message: Buffer, objects: ProtobufObjects): unknown {
  try {
    return objects.decode(message);
  } catch (error) {
    return new UndecodableObject(objects.keyOf(message), error);
  }
}

/** A watch event's object ("k8s\0" envelope): the decoded view, a Status (ERROR events), or an UndecodableObject. */
export function decodeEnveloped(bytes: Uint8Array, objects: ProtobufObjects): unknown {
  let envelope: ReturnType<typeof openEnvelope>;
  try {
    envelope = openEnvelope(bytes);
  } catch (error) {
    return new UndecodableObject(undefined, error);
  }
  if (envelope.kind === "Status") {
    try {
      return readStatusMessage(envelope.raw);
    } catch (error) {
      return new UndecodableObject(undefined, error);
    }
  }
  if (envelope.kind !== objects.kind) {
    return new UndecodableObject(undefined, new Error(`expected a ${objects.kind}, got a ${envelope.kind}`));
  }
  return decodeItem(envelope.raw, objects);
}
