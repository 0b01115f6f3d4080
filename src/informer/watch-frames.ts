// Splits a Kubernetes protobuf watch body (Content-Type application/vnd.kubernetes.protobuf;stream=watch) into
// events. Each frame is a 4-byte big-endian length and that many bytes (apimachinery's LengthDelimitedFramer); the
// bytes are a metav1.WatchEvent message, written without an envelope by the stream's raw serializer, whose object
// is the "k8s\0" envelope of the Pod or Status (apiserver pkg/endpoints/handlers/watch.go; checked against the
// real API server by test/integration/wire/).
import { readWatchEventMessage } from "../kube/protobuf-envelope.js";
import { decodeEnveloped, type ProtobufObjects } from "../kube/protobuf-objects.js";
import type { WatchBody } from "../kube/streamed-response.js";
import { readBody } from "./watch-body.js";
import type { WatchEventHandler } from "./watch-lines.js";

const LENGTH_BYTES = 4;
// A frame is one object: the API server takes request bodies of up to 3 MiB, so anything near this length is a
// broken stream, not an object; it is refused before a buffer of that length is made for it.
const MAX_FRAME_BYTES = 64 * 1024 * 1024;

/**
 * Reads a protobuf watch body to its end, decoding each event's object with `objects` (an object it cannot read
 * comes as an UndecodableObject); same contract as readWatchEvents. A frame that is not a WatchEvent rejects.
 */
export function readWatchFrames(
  body: WatchBody,
  objects: ProtobufObjects,
  onChunk: () => void,
  onEvent: WatchEventHandler,
): Promise<void> {
  return readBody(body, onChunk, ({ stop, stopped }) => {
    // A frame its chunk did not finish: copied once into a buffer of its whole length as its bytes come (most of an
    // injected pod's frames straddle chunks), not kept as chunks and joined again at its end.
    let partial: Buffer | undefined;
    let filled = 0;
    // The first bytes of a length prefix a chunk's end cut (fewer than 4).
    let prefix: Buffer | undefined;
    const frame = (bytes: Buffer) => {
      const event = readWatchEventMessage(bytes);
      onEvent({ type: event.type, object: decodeEnveloped(event.object, objects) }, stop);
    };
    return {
      chunk(chunk) {
        let bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        if (prefix !== undefined) {
          bytes = Buffer.concat([prefix, bytes]);
          prefix = undefined;
        }
        let start = 0;
        if (partial !== undefined) {
          start = bytes.copy(partial, filled);
          filled += start;
          if (filled < partial.length) return;
          const whole = partial;
          partial = undefined;
          frame(whole);
        }
        while (!stopped() && bytes.length - start >= LENGTH_BYTES) {
          const length = bytes.readUInt32BE(start);
          const frameEnd = start + LENGTH_BYTES + length;
          if (frameEnd > bytes.length) {
            if (length > MAX_FRAME_BYTES) {
              throw new Error(`watch frame of ${length} bytes: more than any object the API server stores`);
            }
            partial = Buffer.allocUnsafe(length);
            filled = bytes.copy(partial, 0, start + LENGTH_BYTES);
            return;
          }
          frame(bytes.subarray(start + LENGTH_BYTES, frameEnd));
          start = frameEnd;
        }
        if (!stopped() && start < bytes.length) prefix = Buffer.from(bytes.subarray(start));
      },
      end() {
        const left = partial !== undefined ? LENGTH_BYTES + filled : (prefix?.length ?? 0);
        if (left > 0) throw new Error(`watch stream ended inside a frame (${left} bytes left)`);
      },
    };
  });
}
