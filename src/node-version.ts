/**
 * The Node.js the service and its CLI need, checked by the entry points (main.ts, cli.ts) before anything else is
 * loaded. This module imports nothing: on an older Node, loading the application fails before any of its code runs
 * (an ESM import of something that Node lacks, such as zlib's zstd functions, is a link error with no hint), so the
 * entry points check the version first and load the rest with a dynamic import.
 */

/** The oldest Node.js the code runs on (package.json `engines`). */
export const REQUIRED_NODE = '24.11';

/** The one-line reason `version` (as `process.versions.node`) cannot run `entry`, or undefined when it can. */
export function oldNodeMessage(
  version: string,
  entry: 'service' | 'CLI',
  instead: string,
): string | undefined {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const [needMajor, needMinor] = REQUIRED_NODE.split('.').map(Number) as [number, number];
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return undefined;
  return (
    `This ${entry} needs Node.js ${REQUIRED_NODE} or later (this is Node.js ${version}): type ${instead} ` +
    `instead, which runs it on the project's own Node 24 (node_modules/.bin/node), or switch to Node 24 (nvm use).`
  );
}

/** Exits at once, with that one line on standard error, when this Node.js is too old to run `entry`. */
export function exitOnOldNode(entry: 'service' | 'CLI', instead: string): void {
  const message = oldNodeMessage(process.versions.node, entry, instead);
  if (!message) return;
  process.stderr.write(`${message}\n`);
  process.exit(1);
}
