/**
 * The Accept header of a write whose answer we do not read (its callers take the bytes and drop them, unparsed):
 * only the object's metadata, as client-go's metadata client asks, and as protobuf first. The server then encodes
 * a small PartialObjectMetadata in its cheaper encoding, not the spec and status that are most of a sidecar-injected
 * pod, a node's image list or an Event's note. Refusals are Status objects either way (the transport reads their
 * message from protobuf or JSON); a server that cannot convert answers one of the JSON types listed after it.
 */
export const METADATA_ONLY =
  "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, " +
  "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json";
