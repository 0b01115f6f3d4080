// The mesh CNI plugin's executable (the node's CNI bin directory holds a script that runs this with Node).
import { readFileSync } from "node:fs";
import { runCniCommand } from "./mesh-cni-plugin.js";

const command = process.env.CNI_COMMAND ?? "";
try {
  const stdin = command === "VERSION" ? "" : readFileSync(0, "utf8");
  process.stdout.write(runCniCommand(command, stdin, process.env));
} catch (error) {
  // The CNI error format: the runtime puts msg into the sandbox's failure, which the kubelet shows in Events.
  process.stdout.write(JSON.stringify({ cniVersion: "1.0.0", code: 999, msg: String(error) }));
  process.exitCode = 1;
}
