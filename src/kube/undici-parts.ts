// undici's Agent from its own module. The package's index also loads its mock agents, caches, WebSocket,
// EventSource, cookies and proxy agents: ~2 MB of RSS a per-node instance would carry for nothing. Requests go
// through the Agent's dispatch (whole-response.ts, streamed-response.ts), so nothing else of undici is loaded.
// The package has no export map, so this path is public; a unit test checks it is the package's own.
import { createRequire } from "node:module";
import type * as Undici from "undici";

export type { Dispatcher } from "undici";
export type Agent = Undici.Agent;

const require = createRequire(import.meta.url);

export const Agent: typeof Undici.Agent = require("undici/lib/dispatcher/agent.js");
