// A watch response read as what its Content-Type says it is: protobuf frames or JSON lines.
import { isProtobuf } from "../kube/protobuf-envelope.js";
import type { ProtobufObjects } from "../kube/protobuf-objects.js";
import type { WatchResponse } from "../kube/transport.js";
import { readWatchFrames } from "./watch-frames.js";
import { readWatchEvents, type WatchEventHandler } from "./watch-lines.js";

/** Reads the watch to its end (see readWatchEvents); protobuf only when it was asked for (`protobuf`) and given. */
export function readWatch(
  response: WatchResponse,
  protobuf: ProtobufObjects | undefined,
  onChunk: () => void,
  onEvent: WatchEventHandler,
): Promise<void> {
  if (protobuf !== undefined && isProtobuf(response.contentType)) {
    return readWatchFrames(response.body, protobuf, onChunk, onEvent);
  }
  if (isProtobuf(response.contentType)) {
    response.body.destroy();
    return Promise.reject(new Error("the API server answered a JSON watch with protobuf"));
  }
  return readWatchEvents(response.body, onChunk, onEvent);
}
