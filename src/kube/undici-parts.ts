// undici's Agent and request from their own modules. The package's index also loads its mock agents, caches,
// WebSocket, EventSource, cookies and proxy agents: ~2 MB of RSS a per-node instance would carry for nothing.
// The package has no export map, so these paths are public; a unit test checks they are the package's own.
import { createRequire } from "node:module";
import type * as Undici from "undici";

export type { Dispatcher } from "undici";
export type Agent = Undici.Agent;

const require = createRequire(import.meta.url);

export const Agent: typeof Undici.Agent = require("undici/lib/dispatcher/agent.js");

type RequestApi = (
  this: Undici.Dispatcher,
  options: Undici.Dispatcher.RequestOptions,
) => Promise<Undici.Dispatcher.ResponseData>;
const requestApi = require("undici/lib/api/api-request.js") as RequestApi;

/** `dispatcher.request(options)`: the index installs it on Dispatcher's prototype, which is not loaded here. */
export const request = (
  dispatcher: Undici.Dispatcher,
  options: Undici.Dispatcher.RequestOptions,
): Promise<Undici.Dispatcher.ResponseData> => requestApi.call(dispatcher, options);
