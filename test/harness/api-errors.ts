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

/** The status code and, when refused, the Status message of a client-node call. */
export async function outcomeOf(call: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await call;
    return { code: 200, message: "" };
  } catch (error) {
    if (!(error instanceof ApiException)) throw error;
    const body: unknown = typeof error.body === "string" ? JSON.parse(error.body) : error.body;
    return { code: error.code, message: String((body as { message?: unknown } | undefined)?.message ?? "") };
  }
}
