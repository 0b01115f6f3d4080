// The bundled app's entry point (image/bundle.sh makes it dist/src/cli/main.js, beside the app as app.js): runs the
// app from its code cache (code-cache.ts) as Node would run it as a CommonJS module.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { debuglog } from "node:util";
import { compileApp } from "./code-cache.js";

const app = join(dirname(fileURLToPath(import.meta.url)), "app.js");
const { run, verdict } = compileApp(app);
// NODE_DEBUG=cni_repair_boot says whether this start used the cache (the image test asserts it does).
debuglog("cni_repair_boot")("code cache of %s %s", app, verdict);
const appModule = { exports: {} };
run(appModule.exports, createRequire(app), appModule, app, dirname(app));
