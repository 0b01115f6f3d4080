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
    // Bytes of a frame not yet whole, in arrival order (copies: a chunk is not ours to keep).
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    /** How many bytes the first pending frame needs in all (its length prefix included), once its prefix is in. */
    const pendingFrameBytes = () => {
      const first = pending[0];
      return first !== undefined && first.length >= LENGTH_BYTES ? LENGTH_BYTES + first.readUInt32BE(0) : LENGTH_BYTES;
    };
    const frame = (bytes: Buffer) => {
      const event = readWatchEventMessage(bytes);
      onEvent({ type: event.type, object: decodeEnveloped(event.object, objects) }, stop);
    };
    return {
      chunk(chunk) {
        let bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        if (pendingBytes > 0) {
          // Copied once here and joined once when the frame is whole (not re-joined on every chunk of a big one).
          pending.push(Buffer.from(bytes));
          pendingBytes += bytes.length;
          if (pendingBytes < pendingFrameBytes()) return;
          bytes = Buffer.concat(pending, pendingBytes);
          pending = [];
          pendingBytes = 0;
        }
        let start = 0;
        while (!stopped() && bytes.length - start >= LENGTH_BYTES) {
          const frameEnd = start + LENGTH_BYTES + bytes.readUInt32BE(start);
          if (frameEnd > bytes.length) break;
          frame(bytes.subarray(start + LENGTH_BYTES, frameEnd));
          start = frameEnd;
        }
        if (!stopped() && start < bytes.length) {
          pending = [Buffer.from(bytes.subarray(start))];
          pendingBytes = bytes.length - start;
        }
      },
      end() {
        if (pendingBytes > 0) throw new Error(`watch stream ended inside a frame (${pendingBytes} bytes left)`);
      },
    };
  });
}
