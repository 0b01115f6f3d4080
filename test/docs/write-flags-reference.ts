// `make docs`: rewrites docs/flags.md from the built CLI's help screens.
import { writeFileSync } from "node:fs";
import { cliHelp, FLAGS_REFERENCE_PATH, renderFlagsReference } from "./flags-reference.js";

writeFileSync(FLAGS_REFERENCE_PATH, renderFlagsReference(cliHelp()));
console.log(`wrote ${FLAGS_REFERENCE_PATH}`);
