// The practical floor for an initial sync: page through every pod (500 a page, JSON parsed), keep nothing, exit.
// Reads the bench's kubeconfig (server, CA data, bearer token) from KUBECONFIG.
import { readFileSync } from "node:fs";
import { Agent, fetch } from "undici";

type Kubeconfig = {
  clusters: { cluster: { server: string; "certificate-authority-data": string } }[];
  users: { user: { token: string } }[];
};

const config = JSON.parse(readFileSync(process.env.KUBECONFIG ?? "", "utf8")) as Kubeconfig;
const cluster = config.clusters[0]?.cluster;
const token = config.users[0]?.user.token;
if (!cluster || !token) throw new Error("KUBECONFIG has no cluster or token");
const agent = new Agent({ connect: { ca: Buffer.from(cluster["certificate-authority-data"], "base64").toString() } });

const started = performance.now();
let pods = 0;
let continueToken = "";
do {
  const query = `limit=500${continueToken ? `&continue=${encodeURIComponent(continueToken)}` : ""}`;
  const response = await fetch(`${cluster.server}/api/v1/pods?${query}`, {
    dispatcher: agent,
    headers: { authorization: `Bearer ${token}`, accept: "application/json" },
  });
  if (response.status !== 200) throw new Error(`list: ${response.status} ${await response.text()}`);
  const page = (await response.json()) as { items: unknown[]; metadata: { continue?: string } };
  pods += page.items.length;
  continueToken = page.metadata.continue ?? "";
} while (continueToken !== "");
console.log(JSON.stringify({ msg: "listed", pods, listMs: performance.now() - started }));
await agent.close();
