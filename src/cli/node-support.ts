// The Node.js cni-repair runs on: 24.11 or later (package.json "engines"). An older one fails deep in a dependency
// (undici needs zlib's zstd) with a stack trace that names neither Node nor its version; this names both, at once.

/** Why this Node cannot run cni-repair, or undefined when it can. */
export function unsupportedNode(version: string = process.versions.node): string | undefined {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  if (major > 24 || (major === 24 && minor >= 11)) return undefined;
  return `needs Node.js 24.11 or later; this is Node.js v${version}`;
}
