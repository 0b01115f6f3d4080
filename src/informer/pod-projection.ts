// What a pod watch reads of each pod when it reads protobuf: the schema's labels, annotations and init containers,
// and the annotations read whatever the rules (a mirror pod's, the initial-events-end bookmark's).
import { podKey } from "../detect/facts.js";
import { type FactsSchema, MIRROR_ANNOTATION, SANDBOX_CONDITION } from "../detect/to-pod-facts.js";
import { type PodProjection, wantedStrings } from "../kube/pod-protobuf.js";
import { podObjects } from "../kube/protobuf-objects.js";
import { READY_CONDITION } from "./cni-agent-pods.js";
import { INITIAL_EVENTS_END } from "./initial-list.js";
import type { ReflectorProtobuf } from "./reflector.js";

const ALWAYS_READ_ANNOTATIONS = [MIRROR_ANNOTATION, INITIAL_EVENTS_END];

/** Everything toPodFacts reads with this schema. */
export function projectionOf(schema: FactsSchema): PodProjection {
  return {
    labelKeys: wantedStrings(schema.labelKeys),
    annotationKeys: wantedStrings([...schema.annotationKeys, ...ALWAYS_READ_ANNOTATIONS]),
    conditionTypes: wantedStrings(schema.keepSandboxSince ? [SANDBOX_CONDITION] : []),
    initContainers: new Set(schema.initContainers),
    containerStarts: schema.keepSandboxSince,
    messages: schema.keepMessages,
  };
}

/** What toAgentFacts reads: no labels, annotations or container statuses; the Ready condition. */
export const AGENT_PROJECTION: PodProjection = {
  labelKeys: wantedStrings([]),
  annotationKeys: wantedStrings(ALWAYS_READ_ANNOTATIONS),
  conditionTypes: wantedStrings([READY_CONDITION]),
  initContainers: new Set(),
  containerStarts: false,
  messages: false,
};

/** Pods as protobuf, the store keyed by namespace/name (as the pod and agent stores are). */
export const podsAsProtobuf = (projection: PodProjection): ReflectorProtobuf => ({
  objects: podObjects(projection),
  storeKey: ({ namespace, name }) => podKey(namespace, name),
});
