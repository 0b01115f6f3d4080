// An error's message for a log line, whatever was thrown (a thrown string or object has no .message).

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The stack when there is one (a bug's log line needs it), else the message; an AggregateError's with each of its. */
export function stackOf(error: unknown): string {
  const own = error instanceof Error && error.stack ? error.stack : String(error);
  return error instanceof AggregateError ? [own, ...error.errors.map(stackOf)].join("\n") : own;
}
