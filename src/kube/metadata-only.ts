/**
 * The Accept header of a write whose answer we do not read: only the object's metadata (as client-go's metadata
 * client asks), so the server encodes and we parse that, not the spec and status that are most of a sidecar-injected
 * pod or the note of an Event. Refusals are Status objects either way; a server that cannot convert answers the plain
 * JSON listed after it.
 */
export const METADATA_ONLY = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json";
