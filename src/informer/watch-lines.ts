// Splits a JSON watch response body into parsed events, one per line, handed over as each line completes.
import type { WatchBody } from "../kube/streamed-response.js";
import { readBody } from "./watch-body.js";

export type WatchEvent = { readonly type: string; readonly object: unknown };

/** Gets each event as its line completes; calling `stop` ends the read there (the rest of the body is dropped). */
export type WatchEventHandler = (event: WatchEvent, stop: () => void) => void;

const NEWLINE = 0x0a;

/**
 * Reads a newline-delimited JSON body to its end, calling `onChunk` for every chunk and `onEvent` for every
 * event, synchronously inside the chunk's callback (watch-body.ts). Resolves at the end of the body or at `stop`;
 * rejects with the body's error, a line that is not an event, or whatever `onEvent` throws, and then destroys the
 * body.
 *
 * Lines are cut on the newline byte and each whole line is decoded once: a newline byte never occurs inside a
 * multi-byte UTF-8 character, and a whole-buffer decode takes the fast path a streaming TextDecoder does not.
 */
export function readWatchEvents(body: WatchBody, onChunk: () => void, onEvent: WatchEventHandler): Promise<void> {
  return readBody(body, onChunk, ({ stop, stopped }) => {
    // Bytes of a line whose newline has not come yet, in arrival order (copies: a chunk is not ours to keep).
    let pending: Uint8Array[] = [];
    const line = (bytes: Uint8Array) => {
      const text = decode(bytes);
      if (text.trim() !== "") onEvent(parseEvent(text), stop);
    };
    return {
      chunk(chunk) {
        let start = 0;
        for (
          let newline = chunk.indexOf(NEWLINE);
          newline >= 0 && !stopped();
          newline = chunk.indexOf(NEWLINE, start)
        ) {
          const tail = chunk.subarray(start, newline);
          const bytes = pending.length === 0 ? tail : Buffer.concat([...pending, tail]);
          pending = [];
          start = newline + 1;
          line(bytes);
        }
        if (!stopped() && start < chunk.length) pending.push(chunk.slice(start));
      },
      end() {
        if (pending.length > 0) line(Buffer.concat(pending));
        pending = [];
      },
    };
  });
}

function decode(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
}

function parseEvent(line: string): WatchEvent {
  const event = JSON.parse(line) as { type?: unknown; object?: unknown } | null;
  if (typeof event?.type !== "string") throw new Error(`watch stream line is not an event: ${line.slice(0, 200)}`);
  return { type: event.type, object: event.object };
}
