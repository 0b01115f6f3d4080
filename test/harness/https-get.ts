// A minimal HTTPS GET that trusts one CA, for probing the API server before any client exists.
import { request } from "node:https";

export type HttpResponse = { readonly status: number; readonly body: string };

export async function httpsGet(url: string, ca: string | undefined, token: string): Promise<HttpResponse> {
  return await new Promise((resolve, reject) => {
    const req = request(
      url,
      { ca, rejectUnauthorized: ca !== undefined, headers: { authorization: `Bearer ${token}` }, timeout: 5_000 },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on("error", reject);
    req.end();
  });
}
