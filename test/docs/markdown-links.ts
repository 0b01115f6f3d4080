// Relative links in Markdown files must resolve: the file exists, and a #fragment names a heading of the target.
// remark-validate-links does the checking (GitHub's heading slugs); unified-engine runs it over the files as one
// set, which is what lets it see the headings of other files.
import { PassThrough } from "node:stream";
import { remark } from "remark";
import remarkValidateLinks from "remark-validate-links";
import type { Pluggable } from "unified";
import { engine } from "unified-engine";

/** The documentation whose links are checked (folders: every .md inside). */
export const DOCUMENTATION = [
  "README.md",
  "docs",
  "bench/README.md",
  "CHANGELOG.md",
  "SECURITY.md",
  "charts/cni-repair/README.md",
];

// Offline: links are judged against the work tree, never a hosted repository. (The engine's plugin type cannot
// express a plugin that takes the file set as its second argument, hence the widening.)
const validateLinks = [remarkValidateLinks, { repository: false }] as Pluggable;

/** "file:line:column reason" for every link that does not resolve, relative to `cwd`. */
export async function brokenLinks(cwd: string, files: readonly string[]): Promise<string[]> {
  const quiet = new PassThrough();
  quiet.resume();
  return await new Promise((resolve, reject) => {
    engine(
      {
        processor: remark,
        cwd,
        files: [...files],
        extensions: ["md"],
        plugins: [validateLinks],
        output: false,
        out: false,
        quiet: true,
        color: false,
        streamError: quiet,
      },
      (error, _code, context) => {
        if (error) return reject(error);
        const found = (context?.files ?? []).flatMap((file) =>
          file.messages.map((message) => `${file.path}:${message.line}:${message.column} ${message.reason}`),
        );
        resolve(found);
      },
    );
  });
}
