// Reads a watch body to its end through callbacks, the part the JSON line reader and the protobuf frame reader
// share: chunks handed over synchronously (no promise per chunk or event: a WHATWG stream read with for-await cost
// ~100 µs of CPU per watch event, more than the facts), one settle, and the body destroyed once done.
import type { WatchBody } from "../kube/streamed-response.js";

/** Splits chunks into events. */
export type BodySplitter = {
  /** Each chunk as it comes (not ours to keep: copy what must outlive the call). */
  chunk(bytes: Uint8Array): void;
  /** At the body's end: what is left over (a last line without its newline, or a cut-off frame). */
  end(): void;
};

/** What a splitter is made with: `stop` ends the read there (the rest of the body is dropped); `stopped` tells. */
export type ReadControl = { readonly stop: () => void; readonly stopped: () => boolean };

/**
 * Resolves at the end of the body or at `stop`; rejects with the body's error or whatever the splitter throws, and
 * then destroys the body. `onChunk` is called for every chunk before it is split.
 */
export function readBody(
  body: WatchBody,
  onChunk: () => void,
  makeSplitter: (control: ReadControl) => BodySplitter,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (error?: unknown) => {
      if (done) return;
      done = true;
      if (error === undefined) resolve();
      else reject(error);
      if (!body.destroyed) body.destroy();
    };
    const splitter = makeSplitter({ stop: () => finish(), stopped: () => done });
    body.on("data", (chunk: Uint8Array) => {
      if (done) return;
      try {
        onChunk();
        splitter.chunk(chunk);
      } catch (error) {
        finish(error);
      }
    });
    body.on("end", () => {
      try {
        if (!done) splitter.end();
        finish();
      } catch (error) {
        finish(error);
      }
    });
    body.on("error", (error) => finish(error));
    body.on("close", () => finish(new Error("watch body closed before its end")));
  });
}
