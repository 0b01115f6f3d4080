// A test-side encoder of JSON pods into Kubernetes protobuf, with protobufjs's Writer (an implementation of the wire
// format independent of src/kube/protobuf-reader.ts) and the field numbers of the published generated.proto files
// (k8s.io/api core/v1, k8s.io/apimachinery meta/v1 and runtime, v0.34), written down here a second time on purpose:
// a wrong number in the decoder then shows as a difference, not as agreement with itself.
//
// It encodes as the API server's Go types would: a field the JSON leaves out (omitempty) is the Go zero value, which
// gogo-protobuf writes for non-pointer scalars anyway (`zeros: "write"`) or a hand-made encoder may omit
// (`zeros: "omit"`); JSON null for a time is the zero time, an empty message. `unknown` adds fields no Kubernetes
// version has (every wire type, a group included) at both ends of every message: a reader must skip them.
import protobuf from "protobufjs/minimal.js";

const { Writer } = protobuf;
type Writer = protobuf.Writer;

type ScalarField = {
  readonly no: number;
  readonly type: "string" | "bool" | "int32" | "int64";
  readonly pointer?: boolean;
};
type Field =
  | ScalarField
  | { readonly no: number; readonly type: "time"; readonly pointer?: boolean }
  | { readonly no: number; readonly type: "map" }
  | { readonly no: number; readonly type: "strings" }
  | { readonly no: number; readonly type: "message"; readonly of: Schema; readonly pointer?: boolean }
  | { readonly no: number; readonly type: "messages"; readonly of: Schema };
type Schema = { readonly [json: string]: Field };

const time = (no: number, pointer = false): Field => ({ no, type: "time", pointer });
const str = (no: number): Field => ({ no, type: "string" });

const ownerReference: Schema = {
  kind: str(1),
  name: str(3),
  uid: str(4),
  apiVersion: str(5),
  controller: { no: 6, type: "bool", pointer: true },
  blockOwnerDeletion: { no: 7, type: "bool", pointer: true },
};
const managedFieldsEntry: Schema = { manager: str(1), operation: str(2), apiVersion: str(3), time: time(4, true) };
const objectMeta: Schema = {
  name: str(1),
  generateName: str(2),
  namespace: str(3),
  uid: str(5),
  resourceVersion: str(6),
  generation: { no: 7, type: "int64" },
  creationTimestamp: time(8),
  deletionTimestamp: time(9, true),
  labels: { no: 11, type: "map" },
  annotations: { no: 12, type: "map" },
  ownerReferences: { no: 13, type: "messages", of: ownerReference },
  finalizers: { no: 14, type: "strings" },
  managedFields: { no: 17, type: "messages", of: managedFieldsEntry },
};
const envVar: Schema = { name: str(1), value: str(2) };
const container: Schema = {
  name: str(1),
  image: str(2),
  command: { no: 3, type: "strings" },
  args: { no: 4, type: "strings" },
  env: { no: 7, type: "messages", of: envVar },
};
const podSpec: Schema = {
  containers: { no: 2, type: "messages", of: container },
  restartPolicy: str(3),
  serviceAccountName: str(8),
  nodeName: str(10),
  hostNetwork: { no: 11, type: "bool" },
  initContainers: { no: 20, type: "messages", of: container },
};
const waiting: Schema = { reason: str(1), message: str(2) };
const running: Schema = { startedAt: time(1) };
const terminated: Schema = {
  exitCode: { no: 1, type: "int32" },
  signal: { no: 2, type: "int32" },
  reason: str(3),
  message: str(4),
  startedAt: time(5),
  finishedAt: time(6),
  containerID: str(7),
};
const containerState: Schema = {
  waiting: { no: 1, type: "message", of: waiting, pointer: true },
  running: { no: 2, type: "message", of: running, pointer: true },
  terminated: { no: 3, type: "message", of: terminated, pointer: true },
};
const containerStatus: Schema = {
  name: str(1),
  state: { no: 2, type: "message", of: containerState },
  lastState: { no: 3, type: "message", of: containerState },
  ready: { no: 4, type: "bool" },
  restartCount: { no: 5, type: "int32" },
  image: str(6),
  imageID: str(7),
  containerID: str(8),
  started: { no: 9, type: "bool", pointer: true },
};
const podCondition: Schema = {
  type: str(1),
  status: str(2),
  lastProbeTime: time(3),
  lastTransitionTime: time(4),
  reason: str(5),
  message: str(6),
};
const podStatus: Schema = {
  phase: str(1),
  conditions: { no: 2, type: "messages", of: podCondition },
  message: str(3),
  reason: str(4),
  hostIP: str(5),
  podIP: str(6),
  startTime: time(7, true),
  containerStatuses: { no: 8, type: "messages", of: containerStatus },
  qosClass: str(9),
  initContainerStatuses: { no: 10, type: "messages", of: containerStatus },
};
const pod: Schema = {
  metadata: { no: 1, type: "message", of: objectMeta },
  spec: { no: 2, type: "message", of: podSpec },
  status: { no: 3, type: "message", of: podStatus },
};

export type EncodeOptions = {
  /** Zero values of non-pointer scalars: written (as the API server does) or left out (also valid protobuf). */
  readonly zeros: "write" | "omit";
  /** Fields of no Kubernetes version, every wire type, at both ends of every message. */
  readonly unknown: boolean;
  /**
   * How a map entry is laid out: key then value, as every encoder writes it (the default); value then key; or key,
   * a field of no Kubernetes version, then value. All three are valid protobuf and read the same.
   */
  readonly mapEntries?: "key-value" | "value-key" | "with-unknown";
};

const WIRE = { varint: 0, fixed64: 1, delimited: 2, startGroup: 3, endGroup: 4, fixed32: 5 } as const;
const tag = (w: Writer, no: number, wire: number) => w.uint32(((no << 3) | wire) >>> 0);

function unknownFields(w: Writer): void {
  tag(w, 4001, WIRE.varint).uint64(2 ** 40 + 3);
  tag(w, 4002, WIRE.delimited).string("a field from the future");
  tag(w, 4003, WIRE.fixed32).fixed32(7);
  tag(w, 4004, WIRE.fixed64).fixed64(9);
  tag(w, 4005, WIRE.startGroup);
  tag(w, 1, WIRE.varint).uint32(1);
  tag(w, 4005, WIRE.endGroup);
}

/** RFC 3339 (whole seconds, as the API's JSON) to epoch seconds. */
const seconds = (value: string): number => Math.floor(Date.parse(value) / 1000);

function writeTime(w: Writer, no: number, value: unknown): void {
  tag(w, no, WIRE.delimited).fork();
  // null is the zero time: an empty message. Nanos are written to show they are not read (the JSON has none).
  if (typeof value === "string") tag(w, 1, WIRE.varint).int64(seconds(value));
  if (typeof value === "string") tag(w, 2, WIRE.varint).int32(123_456_789);
  w.ldelim();
}

function writeScalar(w: Writer, field: ScalarField, value: unknown): void {
  if (field.type === "string") tag(w, field.no, WIRE.delimited).string(value as string);
  else if (field.type === "bool") tag(w, field.no, WIRE.varint).bool(value as boolean);
  else if (field.type === "int32") tag(w, field.no, WIRE.varint).int32(value as number);
  else tag(w, field.no, WIRE.varint).int64(value as number);
}

const ZERO = { string: "", bool: false, int32: 0, int64: 0 } as const;

function writeMessage(w: Writer, schema: Schema, json: Record<string, unknown>, options: EncodeOptions): void {
  if (options.unknown) unknownFields(w);
  for (const [name, field] of Object.entries(schema)) {
    const value = Object.hasOwn(json, name) ? json[name] : undefined;
    switch (field.type) {
      case "string":
      case "bool":
      case "int32":
      case "int64": {
        if (value === undefined || value === null) {
          if (!field.pointer && options.zeros === "write") writeScalar(w, field, ZERO[field.type]);
        } else if (value !== ZERO[field.type] || field.pointer || options.zeros === "write") {
          writeScalar(w, field, value);
        }
        break;
      }
      case "time":
        // null is the zero time: an empty message, which Go writes for a non-pointer time even when the JSON omits it.
        if (value !== undefined || (!field.pointer && options.zeros === "write")) writeTime(w, field.no, value ?? null);
        break;
      case "map":
        for (const [key, entry] of Object.entries((value ?? {}) as Record<string, string>)) {
          const writeValue = entry !== "" || options.zeros === "write";
          tag(w, field.no, WIRE.delimited).fork();
          if (options.mapEntries === "value-key" && writeValue) tag(w, 2, WIRE.delimited).string(entry);
          tag(w, 1, WIRE.delimited).string(key);
          if (options.mapEntries === "with-unknown") tag(w, 4001, WIRE.varint).uint32(7);
          if (options.mapEntries !== "value-key" && writeValue) tag(w, 2, WIRE.delimited).string(entry);
          w.ldelim();
        }
        break;
      case "strings":
        for (const item of (value ?? []) as string[]) tag(w, field.no, WIRE.delimited).string(item);
        break;
      case "message":
        if (value === undefined || value === null) {
          if (field.pointer || options.zeros === "omit") break;
        }
        tag(w, field.no, WIRE.delimited).fork();
        writeMessage(w, field.of, (value ?? {}) as Record<string, unknown>, options);
        w.ldelim();
        break;
      case "messages":
        for (const item of (value ?? []) as Record<string, unknown>[]) {
          tag(w, field.no, WIRE.delimited).fork();
          writeMessage(w, field.of, item, options);
          w.ldelim();
        }
        break;
    }
  }
  if (options.unknown) unknownFields(w);
}

/** A JSON pod as a core/v1 Pod message (no envelope). */
export function encodePod(json: unknown, options: EncodeOptions = { zeros: "write", unknown: false }): Buffer {
  const w = Writer.create();
  writeMessage(w, pod, json as Record<string, unknown>, options);
  return Buffer.from(w.finish());
}

/** The "k8s\0" + runtime.Unknown envelope { TypeMeta typeMeta = 1 {apiVersion = 1, kind = 2}; bytes raw = 2 }. */
export function envelope(kind: string, raw: Uint8Array, apiVersion = "v1"): Buffer {
  const w = Writer.create();
  tag(w, 1, WIRE.delimited).fork();
  tag(w, 1, WIRE.delimited).string(apiVersion);
  tag(w, 2, WIRE.delimited).string(kind);
  w.ldelim();
  tag(w, 2, WIRE.delimited).bytes(raw);
  return Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x00]), w.finish()]);
}

/** A metav1.WatchEvent { string type = 1; RawExtension object = 2 { bytes raw = 1 } } framed for a watch stream. */
export function watchFrame(type: string, object: Uint8Array): Buffer {
  const w = Writer.create();
  tag(w, 1, WIRE.delimited).string(type);
  tag(w, 2, WIRE.delimited).fork();
  tag(w, 1, WIRE.delimited).bytes(object);
  w.ldelim();
  const message = w.finish();
  const length = Buffer.alloc(4);
  length.writeUInt32BE(message.length);
  return Buffer.concat([length, message]);
}

/** A metav1.Status { string status = 2; string message = 3; string reason = 4; int32 code = 6; }. */
export function encodeStatus(status: { status: string; message: string; reason: string; code: number }): Buffer {
  const w = Writer.create();
  tag(w, 2, WIRE.delimited).string(status.status);
  tag(w, 3, WIRE.delimited).string(status.message);
  tag(w, 4, WIRE.delimited).string(status.reason);
  tag(w, 6, WIRE.varint).int32(status.code);
  return Buffer.from(w.finish());
}

/** A list { ListMeta metadata = 1 { resourceVersion = 2; continue = 3 }; repeated items = 2 } in its envelope. */
export function encodePodList(items: readonly Uint8Array[], resourceVersion: string, continueToken = ""): Buffer {
  const w = Writer.create();
  tag(w, 1, WIRE.delimited).fork();
  tag(w, 2, WIRE.delimited).string(resourceVersion);
  if (continueToken !== "") tag(w, 3, WIRE.delimited).string(continueToken);
  w.ldelim();
  for (const item of items) tag(w, 2, WIRE.delimited).bytes(item);
  return envelope("PodList", w.finish());
}
