// The real node's pod network: the standard bridge and host-local plugins (Debian's containernetworking-plugins),
// then the tests' mesh plugin chained after them (mesh-cni-plugin.ts), with the switch that says whether the
// node's mesh CNI agent is ready.
import { chmodSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { NodeLayout } from "./node-layout.js";

/** Where Debian installs the standard plugins. */
const STANDARD_PLUGINS_DIR = "/usr/lib/cni";
/** containerd runs loopback for every sandbox itself; bridge and host-local make the pod network. */
const STANDARD_PLUGINS = ["bridge", "host-local", "loopback"];
export const MESH_PLUGIN = "cni-repair-test-mesh";

/**
 * The node's network configuration: the bridge, then the tests' mesh plugin unless `meshPlugin` is false (a node
 * for a real mesh's CNI agent, which chains its own plugin into this configuration when it is installed).
 */
export function writeMeshCni(layout: NodeLayout, meshPlugin = true): void {
  mkdirSync(layout.cniBinDir, { recursive: true });
  mkdirSync(layout.cniConfDir, { recursive: true });
  mkdirSync(layout.agentSwitchDir, { recursive: true });
  for (const plugin of STANDARD_PLUGINS) {
    const path = join(STANDARD_PLUGINS_DIR, plugin);
    if (!existsSync(path)) {
      throw new Error(`${path} is missing: run 'make node' (Debian: apt-get install containernetworking-plugins)`);
    }
    symlinkSync(path, join(layout.cniBinDir, plugin));
  }
  // The plugin runs with this Node (the pinned one the tests run with) from the compiled harness.
  const main = fileURLToPath(new URL("./mesh-cni-plugin-main.js", import.meta.url));
  const wrapper = join(layout.cniBinDir, MESH_PLUGIN);
  writeFileSync(wrapper, `#!/bin/sh\nexec '${process.execPath}' '${main}'\n`);
  chmodSync(wrapper, 0o755);
  const network = {
    cniVersion: "1.0.0",
    name: "cni-repair-test",
    plugins: [
      {
        type: "bridge",
        bridge: layout.bridge,
        isGateway: true,
        // No masquerading: the pods talk to nothing outside the node, and the node adds no iptables rules.
        ipMasq: false,
        ipam: {
          type: "host-local",
          ranges: [[{ subnet: layout.podSubnet }]],
          // A default route, as every pod network gives: without one, connecting to 10.255.255.1 fails in the
          // route lookup (ENETUNREACH) before the packet reaches the nat table's OUTPUT chain and its REDIRECT.
          routes: [{ dst: "0.0.0.0/0" }],
          dataDir: join(layout.dir, "ipam"),
        },
      },
      ...(meshPlugin ? [{ type: MESH_PLUGIN, agentReadyFile: layout.agentReadyFile, logFile: layout.meshLog }] : []),
    ],
  };
  writeFileSync(join(layout.cniConfDir, "10-cni-repair-test.conflist"), JSON.stringify(network, null, 2));
}

/** Turns the node's mesh CNI agent on or off: the plugin and the agent pod's readiness probe both follow it. */
export function setMeshAgentReady(layout: NodeLayout, ready: boolean): void {
  if (ready) writeFileSync(layout.agentReadyFile, "ready\n");
  else rmSync(layout.agentReadyFile, { force: true });
}
