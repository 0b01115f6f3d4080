// Reads the HTTP status out of whatever a client-node call threw.
import { ApiException } from "@kubernetes/client-node";

/** The status code of a failed API call, or throws the error again when it was not an API error. */
export async function statusOf(call: Promise<unknown>): Promise<number> {
  try {
    await call;
    return 200;
  } catch (error) {
    if (error instanceof ApiException) return error.code;
    throw error;
  }
}
