// Splits a watch response body into parsed JSON events, one per line.

export type WatchEvent = { readonly type: string; readonly object: unknown };

/** Yields each event of a newline-delimited JSON stream; a line that is not an event object is an error. */
export async function* watchEvents(body: AsyncIterable<Uint8Array>, onChunk: () => void): AsyncGenerator<WatchEvent> {
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of body) {
    onChunk();
    buffered += decoder.decode(chunk, { stream: true });
    // Walk the lines by index: slicing the remainder per line would copy a big chunk over and over.
    let start = 0;
    for (let newline = buffered.indexOf("\n"); newline >= 0; newline = buffered.indexOf("\n", start)) {
      const line = buffered.slice(start, newline);
      start = newline + 1;
      if (line.trim() !== "") yield parseEvent(line);
    }
    buffered = buffered.slice(start);
  }
  buffered += decoder.decode();
  if (buffered.trim() !== "") yield parseEvent(buffered);
}

function parseEvent(line: string): WatchEvent {
  const event = JSON.parse(line) as { type?: unknown; object?: unknown } | null;
  if (typeof event?.type !== "string") throw new Error(`watch stream line is not an event: ${line.slice(0, 200)}`);
  return { type: event.type, object: event.object };
}
