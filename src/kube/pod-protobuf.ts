// A core/v1 Pod in Kubernetes protobuf, read into the few fields the facts transforms read, in the shape the JSON
// has (so toPodFacts and toAgentFacts read either without knowing which came). Every other field — the spec's
// containers, volumes and env, managedFields, most of the status: most of an injected pod's bytes — is skipped
// without being decoded, and labels, annotations and init container statuses no one asked for are skipped too.
//
// Field numbers from k8s.io/api/core/v1/generated.proto and k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto
// (v0.34; field numbers never change once published), quoted at each message below. Where a field is absent the Go
// type's zero value is what the API server would have put in its JSON, and `omitempty` decides whether the JSON has
// it: this file mirrors both, and the differential tests (test/integration/wire/, test/unit/kube/) hold it to it.
import { ProtobufReader, WIRE_LENGTH_DELIMITED, WIRE_VARINT } from "./protobuf-reader.js";

/**
 * Strings a reader keeps (map keys, condition types), with their UTF-8 lengths: a string of no wanted length is
 * skipped without being decoded, which is most of a pod's label and annotation keys.
 */
export type WantedStrings = { readonly values: ReadonlySet<string>; readonly byteLengths: ReadonlySet<number> };

export function wantedStrings(values: Iterable<string>): WantedStrings {
  const set = new Set(values);
  return { values: set, byteLengths: new Set([...set].map((value) => Buffer.byteLength(value))) };
}

/** Which of a pod's labels, annotations, conditions and statuses a reader keeps; the rest is skipped undecoded. */
export type PodProjection = {
  readonly labelKeys: WantedStrings;
  readonly annotationKeys: WantedStrings;
  /** Conditions kept, by type. */
  readonly conditionTypes: WantedStrings;
  /** Init container statuses kept, by name (all of them when `containerStarts`). */
  readonly initContainers: ReadonlySet<string>;
  /** Every container's start times (status.containerStatuses, and every init container's): the sandbox fallback. */
  readonly containerStarts: boolean;
  /** Termination messages (up to 4 KiB each): only rules matching on them need them. */
  readonly messages: boolean;
};

type Time = Date | null;
type Termination = {
  exitCode: number;
  reason: string | undefined;
  message: string | undefined;
  startedAt: Time | undefined;
  finishedAt: Time | undefined;
};
type Started = { startedAt: Time | undefined };
type State = { waiting: object | undefined; running: Started | undefined; terminated: Termination | undefined };
type ContainerStatus = { name: string; state: State; lastState: State; restartCount: number };
type Condition = { type: string; status: string; lastTransitionTime: Time | undefined };
type OwnerReference = { kind: string; name: string; uid: string; controller: boolean | undefined };

/** The part of a Pod the decoder keeps, named and shaped as in the API's JSON. */
export type PodView = {
  metadata: {
    name: string | undefined;
    namespace: string | undefined;
    uid: string | undefined;
    resourceVersion: string | undefined;
    creationTimestamp: Time | undefined;
    deletionTimestamp: Time | undefined;
    labels: Record<string, string> | undefined;
    annotations: Record<string, string> | undefined;
    ownerReferences: OwnerReference[] | undefined;
  };
  spec: { nodeName: string | undefined; restartPolicy: string | undefined; hostNetwork: boolean | undefined };
  status: {
    phase: string | undefined;
    conditions: Condition[] | undefined;
    initContainerStatuses: ContainerStatus[] | undefined;
    containerStatuses: ContainerStatus[] | undefined;
  };
};

/** Reads a Pod message (the envelope's raw bytes); throws ProtobufError on bytes that are not one. */
export function decodePod(bytes: Uint8Array, projection: PodProjection): PodView {
  const reader = new ProtobufReader(bytes);
  const end = reader.length;
  const pod: PodView = {
    metadata: {
      name: undefined,
      namespace: undefined,
      uid: undefined,
      resourceVersion: undefined,
      creationTimestamp: undefined,
      deletionTimestamp: undefined,
      labels: undefined,
      annotations: undefined,
      ownerReferences: undefined,
    },
    spec: { nodeName: undefined, restartPolicy: undefined, hostNetwork: undefined },
    status: { phase: undefined, conditions: undefined, initContainerStatuses: undefined, containerStatuses: undefined },
  };
  // Pod { ObjectMeta metadata = 1; PodSpec spec = 2; PodStatus status = 3; }
  for (let tag = reader.tag(end); tag !== 0; tag = reader.tag(end)) {
    const field = tag >>> 3;
    if (field < 1 || field > 3) {
      reader.skip(tag & 7, end);
      continue;
    }
    reader.expect(tag, WIRE_LENGTH_DELIMITED);
    const fieldEnd = reader.delimitedEnd(end);
    if (field === 1) readMetadata(reader, fieldEnd, pod.metadata, projection);
    else if (field === 2) readSpec(reader, fieldEnd, pod.spec);
    else readStatus(reader, fieldEnd, pod.status, projection);
  }
  return pod;
}

/** The pod's namespace and name from bytes that failed to decode, if its metadata can still be read. */
export function podKeyOf(bytes: Uint8Array): { namespace: string; name: string } | undefined {
  try {
    const reader = new ProtobufReader(bytes);
    const end = reader.length;
    for (let tag = reader.tag(end); tag !== 0; tag = reader.tag(end)) {
      if (tag >>> 3 !== 1) {
        reader.skip(tag & 7, end);
        continue;
      }
      reader.expect(tag, WIRE_LENGTH_DELIMITED);
      const metaEnd = reader.delimitedEnd(end);
      let name = "";
      let namespace = "";
      for (let t = reader.tag(metaEnd); t !== 0; t = reader.tag(metaEnd)) {
        if (t >>> 3 === 1) name = reader.stringField(t, metaEnd);
        else if (t >>> 3 === 3) namespace = reader.stringField(t, metaEnd);
        else reader.skip(t & 7, metaEnd);
      }
      return name !== "" && namespace !== "" ? { namespace, name } : undefined;
    }
  } catch {
    // Not even the metadata reads: no key.
  }
  return undefined;
}

type Metadata = PodView["metadata"];

/** The list with the item added at its end (made on the first item: an absent list stays absent, as in the JSON). */
function append<T>(list: T[] | undefined, item: T): T[] {
  if (list === undefined) return [item];
  list.push(item);
  return list;
}

// (Every string read here but a condition's, a container status's and an owner's is omitempty: "" is absent.)
// ObjectMeta { string name = 1; string namespace = 3; string uid = 5; string resourceVersion = 6;
//   Time creationTimestamp = 8; Time deletionTimestamp = 9; map<string,string> labels = 11;
//   map<string,string> annotations = 12; repeated OwnerReference ownerReferences = 13; ... managedFields = 17 }
function readMetadata(reader: ProtobufReader, end: number, metadata: Metadata, projection: PodProjection): void {
  for (let tag = reader.tag(end); tag !== 0; tag = reader.tag(end)) {
    switch (tag >>> 3) {
      case 1:
        metadata.name = reader.stringField(tag, end) || undefined;
        break;
      case 3:
        metadata.namespace = reader.stringField(tag, end) || undefined;
        break;
      case 5:
        metadata.uid = reader.stringField(tag, end) || undefined;
        break;
      case 6:
        metadata.resourceVersion = reader.stringField(tag, end) || undefined;
        break;
      case 8:
        metadata.creationTimestamp = readTime(reader, tag, end);
        break;
      case 9:
        metadata.deletionTimestamp = readTime(reader, tag, end);
        break;
      case 11:
        metadata.labels = readMapEntry(reader, tag, end, projection.labelKeys, metadata.labels);
        break;
      case 12:
        metadata.annotations = readMapEntry(reader, tag, end, projection.annotationKeys, metadata.annotations);
        break;
      case 13:
        metadata.ownerReferences = append(metadata.ownerReferences, readOwnerReference(reader, tag, end));
        break;
      default:
        reader.skip(tag & 7, end);
    }
  }
}

/**
 * One map entry { string key = 1; string value = 2; } kept into `into` when its key is wanted (the map made on
 * the first kept key, with no prototype so any key is plain data). A later entry with the same key wins, as in Go.
 */
function readMapEntry(
  reader: ProtobufReader,
  tag: number,
  end: number,
  wanted: WantedStrings,
  into: Record<string, string> | undefined,
): Record<string, string> | undefined {
  reader.expect(tag, WIRE_LENGTH_DELIMITED);
  const entryEnd = reader.delimitedEnd(end);
  // No key wanted, or an entry laid out as encoders write it whose key has no wanted length: skipped unread.
  const keyLength = wanted.values.size === 0 ? -1 : reader.canonicalKeyLength(entryEnd);
  if (wanted.values.size === 0 || (keyLength >= 0 && !wanted.byteLengths.has(keyLength))) {
    reader.pos = entryEnd;
    return into;
  }
  // undefined: an unwanted key (the last key field counts, as in Go; the API server writes one).
  let key: string | undefined = "";
  let valueAt = -1;
  let valueTag = 0;
  for (let t = reader.tag(entryEnd); t !== 0; t = reader.tag(entryEnd)) {
    if (t >>> 3 === 1) key = wantedString(reader, t, entryEnd, wanted);
    else if (t >>> 3 === 2) {
      // The value may come before the key: note where it is, read it only if the key is wanted.
      valueAt = reader.pos;
      valueTag = t;
      reader.skip(t & 7, entryEnd);
    } else reader.skip(t & 7, entryEnd);
  }
  // An entry without a key field has the key "" (Go's zero value).
  if (key === undefined || !wanted.values.has(key)) return into;
  let value = "";
  if (valueAt >= 0) {
    reader.pos = valueAt;
    value = reader.stringField(valueTag, entryEnd);
  }
  reader.pos = entryEnd;
  const map = into ?? (Object.create(null) as Record<string, string>);
  map[key] = value;
  return map;
}

/** A string field if it is one of `wanted`; otherwise skipped (undecoded unless its length is a wanted one's). */
function wantedString(reader: ProtobufReader, tag: number, end: number, wanted: WantedStrings): string | undefined {
  reader.expect(tag, WIRE_LENGTH_DELIMITED);
  const at = reader.pos;
  const fieldEnd = reader.delimitedEnd(end);
  if (!wanted.byteLengths.has(fieldEnd - reader.pos)) {
    reader.pos = fieldEnd;
    return undefined;
  }
  reader.pos = at;
  const text = reader.string(end);
  return wanted.values.has(text) ? text : undefined;
}

// OwnerReference { string kind = 1; string name = 3; string uid = 4; string apiVersion = 5; bool controller = 6; }
function readOwnerReference(reader: ProtobufReader, tag: number, end: number): OwnerReference {
  reader.expect(tag, WIRE_LENGTH_DELIMITED);
  const refEnd = reader.delimitedEnd(end);
  const ref: OwnerReference = { kind: "", name: "", uid: "", controller: undefined };
  for (let t = reader.tag(refEnd); t !== 0; t = reader.tag(refEnd)) {
    switch (t >>> 3) {
      case 1:
        ref.kind = reader.stringField(t, refEnd);
        break;
      case 3:
        ref.name = reader.stringField(t, refEnd);
        break;
      case 4:
        ref.uid = reader.stringField(t, refEnd);
        break;
      case 6:
        reader.expect(t, WIRE_VARINT);
        ref.controller = reader.bool(refEnd);
        break;
      default:
        reader.skip(t & 7, refEnd);
    }
  }
  return ref;
}

// PodSpec { string restartPolicy = 3; string nodeName = 10; bool hostNetwork = 11; ... }
function readSpec(reader: ProtobufReader, end: number, spec: PodView["spec"]): void {
  for (let tag = reader.tag(end); tag !== 0; tag = reader.tag(end)) {
    switch (tag >>> 3) {
      case 3:
        spec.restartPolicy = reader.stringField(tag, end) || undefined;
        break;
      case 10:
        spec.nodeName = reader.stringField(tag, end) || undefined;
        break;
      case 11:
        reader.expect(tag, WIRE_VARINT);
        spec.hostNetwork = reader.bool(end);
        break;
      default:
        reader.skip(tag & 7, end);
    }
  }
}

// PodStatus { string phase = 1; repeated PodCondition conditions = 2; repeated ContainerStatus containerStatuses = 8;
//   repeated ContainerStatus initContainerStatuses = 10; ... }
function readStatus(reader: ProtobufReader, end: number, status: PodView["status"], projection: PodProjection): void {
  for (let tag = reader.tag(end); tag !== 0; tag = reader.tag(end)) {
    switch (tag >>> 3) {
      case 1:
        status.phase = reader.stringField(tag, end) || undefined;
        break;
      case 2: {
        const condition = readCondition(reader, tag, end, projection.conditionTypes);
        if (condition !== undefined) status.conditions = append(status.conditions, condition);
        break;
      }
      case 8:
        if (!projection.containerStarts) reader.skip(tag & 7, end);
        else
          status.containerStatuses = append(
            status.containerStatuses,
            readContainerStatus(reader, tag, end, projection),
          );
        break;
      case 10: {
        const container = readContainerStatus(reader, tag, end, projection);
        if (projection.containerStarts || projection.initContainers.has(container.name)) {
          status.initContainerStatuses = append(status.initContainerStatuses, container);
        }
        break;
      }
      default:
        reader.skip(tag & 7, end);
    }
  }
}

// PodCondition { string type = 1; string status = 2; Time lastTransitionTime = 4; ... }; undefined unless its type
// is wanted. The type is found first (the last type field counts, as in Go), so a condition not wanted is skipped
// undecoded.
function readCondition(reader: ProtobufReader, tag: number, end: number, wanted: WantedStrings): Condition | undefined {
  reader.expect(tag, WIRE_LENGTH_DELIMITED);
  const conditionEnd = reader.delimitedEnd(end);
  if (wanted.values.size === 0) {
    reader.pos = conditionEnd;
    return undefined;
  }
  const start = reader.pos;
  // A condition without a type field has the type "" (Go's zero value).
  let type = wanted.values.has("") ? "" : undefined;
  for (let t = reader.tag(conditionEnd); t !== 0; t = reader.tag(conditionEnd)) {
    if (t >>> 3 === 1) type = wantedString(reader, t, conditionEnd, wanted);
    else reader.skip(t & 7, conditionEnd);
  }
  if (type === undefined) return undefined;
  const condition: Condition = { type, status: "", lastTransitionTime: undefined };
  reader.pos = start;
  for (let t = reader.tag(conditionEnd); t !== 0; t = reader.tag(conditionEnd)) {
    switch (t >>> 3) {
      case 2:
        condition.status = reader.stringField(t, conditionEnd);
        break;
      case 4:
        condition.lastTransitionTime = readTime(reader, t, conditionEnd);
        break;
      default:
        reader.skip(t & 7, conditionEnd);
    }
  }
  return condition;
}

// ContainerStatus { string name = 1; ContainerState state = 2; ContainerState lastState = 3; int32 restartCount = 5; }
function readContainerStatus(
  reader: ProtobufReader,
  tag: number,
  end: number,
  projection: PodProjection,
): ContainerStatus {
  reader.expect(tag, WIRE_LENGTH_DELIMITED);
  const statusEnd = reader.delimitedEnd(end);
  // state and lastState are non-pointer structs: the JSON always has them, if only as {}.
  const container: ContainerStatus = { name: "", state: emptyState(), lastState: emptyState(), restartCount: 0 };
  for (let t = reader.tag(statusEnd); t !== 0; t = reader.tag(statusEnd)) {
    switch (t >>> 3) {
      case 1:
        container.name = reader.stringField(t, statusEnd);
        break;
      case 2:
        readState(reader, t, statusEnd, container.state, projection);
        break;
      case 3:
        readState(reader, t, statusEnd, container.lastState, projection);
        break;
      case 5:
        reader.expect(t, WIRE_VARINT);
        container.restartCount = reader.int32(statusEnd);
        break;
      default:
        reader.skip(t & 7, statusEnd);
    }
  }
  return container;
}

const emptyState = (): State => ({ waiting: undefined, running: undefined, terminated: undefined });

// ContainerState { ContainerStateWaiting waiting = 1; ContainerStateRunning running = 2;
//   ContainerStateTerminated terminated = 3; } — each a pointer in Go: present (even empty) or absent.
function readState(reader: ProtobufReader, tag: number, end: number, state: State, projection: PodProjection): void {
  reader.expect(tag, WIRE_LENGTH_DELIMITED);
  const stateEnd = reader.delimitedEnd(end);
  for (let t = reader.tag(stateEnd); t !== 0; t = reader.tag(stateEnd)) {
    switch (t >>> 3) {
      case 1:
        // Present is all that is read of a waiting state.
        reader.expect(t, WIRE_LENGTH_DELIMITED);
        reader.skip(t & 7, stateEnd);
        state.waiting = {};
        break;
      case 2:
        state.running = readRunning(reader, t, stateEnd);
        break;
      case 3:
        state.terminated = readTerminated(reader, t, stateEnd, projection);
        break;
      default:
        reader.skip(t & 7, stateEnd);
    }
  }
}

// ContainerStateRunning { Time startedAt = 1; }
function readRunning(reader: ProtobufReader, tag: number, end: number): Started {
  reader.expect(tag, WIRE_LENGTH_DELIMITED);
  const runningEnd = reader.delimitedEnd(end);
  const running: Started = { startedAt: undefined };
  for (let t = reader.tag(runningEnd); t !== 0; t = reader.tag(runningEnd)) {
    if (t >>> 3 === 1) running.startedAt = readTime(reader, t, runningEnd);
    else reader.skip(t & 7, runningEnd);
  }
  return running;
}

// ContainerStateTerminated { int32 exitCode = 1; string reason = 3; string message = 4; Time startedAt = 5;
//   Time finishedAt = 6; ... } — exitCode is always in the JSON (0 when absent here); reason and message are
// omitempty, so "" reads as absent.
function readTerminated(reader: ProtobufReader, tag: number, end: number, projection: PodProjection): Termination {
  reader.expect(tag, WIRE_LENGTH_DELIMITED);
  const terminatedEnd = reader.delimitedEnd(end);
  const terminated: Termination = {
    exitCode: 0,
    reason: undefined,
    message: undefined,
    startedAt: undefined,
    finishedAt: undefined,
  };
  for (let t = reader.tag(terminatedEnd); t !== 0; t = reader.tag(terminatedEnd)) {
    switch (t >>> 3) {
      case 1:
        reader.expect(t, WIRE_VARINT);
        terminated.exitCode = reader.int32(terminatedEnd);
        break;
      case 3:
        terminated.reason = reader.stringField(t, terminatedEnd) || undefined;
        break;
      case 4:
        if (!projection.messages) {
          reader.expect(t, WIRE_LENGTH_DELIMITED);
          reader.skip(t & 7, terminatedEnd);
        } else terminated.message = reader.stringField(t, terminatedEnd) || undefined;
        break;
      case 5:
        terminated.startedAt = readTime(reader, t, terminatedEnd);
        break;
      case 6:
        terminated.finishedAt = readTime(reader, t, terminatedEnd);
        break;
      default:
        reader.skip(t & 7, terminatedEnd);
    }
  }
  return terminated;
}

/**
 * meta/v1 Time { int64 seconds = 1; int32 nanos = 2; }. An empty message is the zero time, which the JSON writes as
 * null; nanos are dropped, as the API server's own decoding and its JSON (RFC 3339, whole seconds) drop them
 * (apimachinery pkg/apis/meta/v1/time_proto.go).
 */
function readTime(reader: ProtobufReader, tag: number, end: number): Time {
  reader.expect(tag, WIRE_LENGTH_DELIMITED);
  const timeEnd = reader.delimitedEnd(end);
  if (timeEnd === reader.pos) return null;
  let seconds = 0;
  for (let t = reader.tag(timeEnd); t !== 0; t = reader.tag(timeEnd)) {
    if (t >>> 3 === 1) {
      reader.expect(t, WIRE_VARINT);
      seconds = reader.int64(timeEnd);
    } else reader.skip(t & 7, timeEnd);
  }
  return new Date(seconds * 1000);
}
