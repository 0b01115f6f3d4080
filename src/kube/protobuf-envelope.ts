// The Kubernetes protobuf envelope around API objects, and the few meta/v1 messages a list or watch carries
// (application/vnd.kubernetes.protobuf; see k8s.io/apimachinery/pkg/runtime/serializer/protobuf/protobuf.go).
//
// An object is the 4-byte magic "k8s\0" then a runtime.Unknown message; field numbers from
// k8s.io/apimachinery/pkg/runtime/generated.proto (v0.34):
//   Unknown  { TypeMeta typeMeta = 1; bytes raw = 2; string contentEncoding = 3; string contentType = 4; }
//   TypeMeta { string apiVersion = 1; string kind = 2; }                  (runtime's, not meta/v1's)
//   RawExtension { bytes raw = 1; }
// and from k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto (v0.34):
//   WatchEvent { string type = 1; RawExtension object = 2; }
//   ListMeta   { string selfLink = 1; string resourceVersion = 2; string continue = 3; int64 remainingItemCount = 4; }
//   Status     { ListMeta metadata = 1; string status = 2; string message = 3; string reason = 4;
//                StatusDetails details = 5; int32 code = 6; }
// A list (PodList, NodeList, ...) is { ListMeta metadata = 1; repeated <Item> items = 2; } in every API group.
import { ProtobufError, ProtobufReader, WIRE_LENGTH_DELIMITED, WIRE_VARINT } from "./protobuf-reader.js";

export const PROTOBUF_CONTENT_TYPE = "application/vnd.kubernetes.protobuf";

const MAGIC = [0x6b, 0x38, 0x73, 0x00] as const;

/** True when a response's Content-Type says Kubernetes protobuf (with or without `;stream=watch`). */
export function isProtobuf(contentType: string | string[] | undefined): boolean {
  const value = Array.isArray(contentType) ? contentType[0] : contentType;
  return value?.trim().toLowerCase().startsWith(PROTOBUF_CONTENT_TYPE) === true;
}

export type Envelope = { readonly apiVersion: string; readonly kind: string; readonly raw: Buffer };

/** Opens the "k8s\0" + runtime.Unknown envelope: the object's kind and its message bytes. */
export function openEnvelope(bytes: Uint8Array): Envelope {
  for (let i = 0; i < MAGIC.length; i++) {
    if (bytes[i] !== MAGIC[i]) throw new ProtobufError("object does not start with the k8s protobuf magic");
  }
  const reader = new ProtobufReader(bytes, MAGIC.length);
  const end = reader.length;
  let apiVersion = "";
  let kind = "";
  let raw: Buffer | undefined;
  let contentEncoding = "";
  for (let tag = reader.tag(end); tag !== 0; tag = reader.tag(end)) {
    switch (tag >>> 3) {
      case 1: {
        reader.expect(tag, WIRE_LENGTH_DELIMITED);
        const typeEnd = reader.delimitedEnd(end);
        for (let t = reader.tag(typeEnd); t !== 0; t = reader.tag(typeEnd)) {
          if (t >>> 3 === 1) apiVersion = reader.stringField(t, typeEnd);
          else if (t >>> 3 === 2) kind = reader.stringField(t, typeEnd);
          else reader.skip(t & 7, typeEnd);
        }
        break;
      }
      case 2:
        reader.expect(tag, WIRE_LENGTH_DELIMITED);
        raw = reader.bytes(end);
        break;
      case 3:
        contentEncoding = reader.stringField(tag, end);
        break;
      default:
        reader.skip(tag & 7, end);
    }
  }
  // The API server never compresses inside the envelope; bytes we cannot read must not pass as an empty object.
  if (contentEncoding !== "") throw new ProtobufError(`object has content encoding ${contentEncoding}`);
  return { apiVersion, kind, raw: raw ?? Buffer.alloc(0) };
}

export type WatchEventBytes = { readonly type: string; readonly object: Buffer };

/** A metav1.WatchEvent message: its type and its object's bytes (an envelope). */
export function readWatchEventMessage(bytes: Uint8Array): WatchEventBytes {
  const reader = new ProtobufReader(bytes);
  const end = reader.length;
  let type = "";
  let object: Buffer | undefined;
  for (let tag = reader.tag(end); tag !== 0; tag = reader.tag(end)) {
    if (tag >>> 3 === 1) type = reader.stringField(tag, end);
    else if (tag >>> 3 === 2) {
      reader.expect(tag, WIRE_LENGTH_DELIMITED);
      const extensionEnd = reader.delimitedEnd(end);
      for (let t = reader.tag(extensionEnd); t !== 0; t = reader.tag(extensionEnd)) {
        if (t >>> 3 === 1) {
          reader.expect(t, WIRE_LENGTH_DELIMITED);
          object = reader.bytes(extensionEnd);
        } else reader.skip(t & 7, extensionEnd);
      }
    } else reader.skip(tag & 7, end);
  }
  if (type === "") throw new ProtobufError("watch event without a type");
  return { type, object: object ?? Buffer.alloc(0) };
}

export type ListBytes = {
  readonly resourceVersion: string;
  readonly continueToken: string;
  /** Each item's message bytes (no envelope: items are embedded messages). */
  readonly items: readonly Buffer[];
};

/** A list message (ListMeta metadata = 1, repeated items = 2), its items left undecoded. */
export function readListMessage(bytes: Uint8Array): ListBytes {
  const reader = new ProtobufReader(bytes);
  const end = reader.length;
  let resourceVersion = "";
  let continueToken = "";
  const items: Buffer[] = [];
  for (let tag = reader.tag(end); tag !== 0; tag = reader.tag(end)) {
    if (tag >>> 3 === 1) {
      reader.expect(tag, WIRE_LENGTH_DELIMITED);
      const metaEnd = reader.delimitedEnd(end);
      for (let t = reader.tag(metaEnd); t !== 0; t = reader.tag(metaEnd)) {
        if (t >>> 3 === 2) resourceVersion = reader.stringField(t, metaEnd);
        else if (t >>> 3 === 3) continueToken = reader.stringField(t, metaEnd);
        else reader.skip(t & 7, metaEnd);
      }
    } else if (tag >>> 3 === 2) {
      reader.expect(tag, WIRE_LENGTH_DELIMITED);
      items.push(reader.bytes(end));
    } else reader.skip(tag & 7, end);
  }
  return { resourceVersion, continueToken, items };
}

/** A metav1.Status message as the JSON Status object carries the same fields (what error handling reads). */
export function readStatusMessage(bytes: Uint8Array): {
  kind: "Status";
  status: string;
  message: string;
  reason: string;
  code: number;
} {
  const reader = new ProtobufReader(bytes);
  const end = reader.length;
  const status = { kind: "Status" as const, status: "", message: "", reason: "", code: 0 };
  for (let tag = reader.tag(end); tag !== 0; tag = reader.tag(end)) {
    switch (tag >>> 3) {
      case 2:
        status.status = reader.stringField(tag, end);
        break;
      case 3:
        status.message = reader.stringField(tag, end);
        break;
      case 4:
        status.reason = reader.stringField(tag, end);
        break;
      case 6:
        reader.expect(tag, WIRE_VARINT);
        status.code = reader.int32(end);
        break;
      default:
        reader.skip(tag & 7, end);
    }
  }
  return status;
}
