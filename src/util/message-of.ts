// An error's message for a log line, whatever was thrown (a thrown string or object has no .message).

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
