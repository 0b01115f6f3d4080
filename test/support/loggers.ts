// The loggers tests give the code under test: one that writes nowhere, and one that keeps its lines for the test
// to read (or print when it fails). One place, instead of a Writable built in every file.
import { Writable } from "node:stream";
import { createLogger, type Logger, type LogLevel } from "../../src/observe/logger.js";

/** Writes nothing (errors included): for tests that judge by metrics, the API or return values. */
export function silentLogger(): Logger {
  return createLogger({ level: "error", format: "json", stream: new Writable({ write: (_c, _e, done) => done() }) });
}

/** Keeps every line at `level` and above in `lines`, as written (JSON, or text for reading on failure). */
export function collectingLogger(options: { readonly level?: LogLevel; readonly format?: "json" | "text" } = {}): {
  readonly logger: Logger;
  readonly lines: string[];
} {
  const lines: string[] = [];
  const logger = createLogger({
    level: options.level ?? "debug",
    format: options.format ?? "json",
    stream: new Writable({
      write: (chunk, _encoding, done) => {
        lines.push(String(chunk).trimEnd());
        done();
      },
    }),
  });
  return { logger, lines };
}
