// What a pod watch reads of each pod when it reads protobuf: the schema's labels, annotations and init containers,
// and the annotations read whatever the rules (a mirror pod's, the initial-events-end bookmark's).
import { podKey } from "../detect/facts.js";
import { type FactsSchema, MIRROR_ANNOTATION } from "../detect/to-pod-facts.js";
import type { PodProjection } from "../kube/pod-protobuf.js";
import { podObjects } from "../kube/protobuf-objects.js";
import { INITIAL_EVENTS_END } from "./initial-list.js";
import type { ReflectorProtobuf } from "./reflector.js";

const ALWAYS_READ_ANNOTATIONS = [MIRROR_ANNOTATION, INITIAL_EVENTS_END];

/** Everything toPodFacts reads with this schema. */
export function projectionOf(schema: FactsSchema): PodProjection {
  return {
    labelKeys: new Set(schema.labelKeys),
    annotationKeys: new Set([...schema.annotationKeys, ...ALWAYS_READ_ANNOTATIONS]),
    initContainers: new Set(schema.initContainers),
    containerStarts: schema.keepSandboxSince,
    messages: schema.keepMessages,
  };
}

/** What toAgentFacts reads: no labels, annotations or container statuses (conditions always come). */
export const AGENT_PROJECTION: PodProjection = {
  labelKeys: new Set(),
  annotationKeys: new Set(ALWAYS_READ_ANNOTATIONS),
  initContainers: new Set(),
  containerStarts: false,
  messages: false,
};

/** Pods as protobuf, the store keyed by namespace/name (as the pod and agent stores are). */
export const podsAsProtobuf = (projection: PodProjection): ReflectorProtobuf => ({
  objects: podObjects(projection),
  storeKey: ({ namespace, name }) => podKey(namespace, name),
});
