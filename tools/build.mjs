// The build (`npm run build`): TypeScript into dist/ (nest build, which empties dist/ first), the TypeORM CLI's
// data source, then the browser bundles (tools/build-web.mjs). Once it has succeeded it records a digest of its
// inputs in dist/.build-inputs. With --if-changed (`npm start`) it builds only when that digest no longer matches
// the sources: a second `npm start` with nothing changed starts at once instead of compiling again.
// Usage: node tools/build.mjs [--if-changed | --digest (prints the digest of the inputs, builds nothing)]
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stamp = join(root, 'dist', '.build-inputs');

/** Everything the build reads besides node_modules/ (whose changes come with package-lock.json). */
const INPUT_DIRS = ['src', 'web'];
const INPUT_FILES = [
  'package.json',
  'package-lock.json',
  'nest-cli.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'tsconfig.ormconfig.json',
  'ormconfig.ts',
  'tools/build.mjs',
  'tools/build-web.mjs',
];

function filesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : filesUnder(path);
    return entry.isFile() ? [path] : [];
  });
}

/** A digest of the build's inputs: every file's path and content, in a fixed order. */
function inputsDigest() {
  const files = [
    ...INPUT_DIRS.flatMap((dir) => filesUnder(join(root, dir))),
    ...INPUT_FILES.map((file) => join(root, file)).filter((file) => existsSync(file)),
  ]
    .map((file) => relative(root, file))
    .sort();
  const hash = createHash('sha256');
  for (const file of files)
    hash
      .update(`${file}\0`)
      .update(readFileSync(join(root, file)))
      .update('\0');
  return hash.digest('hex');
}

function upToDate(digest) {
  try {
    return existsSync(join(root, 'dist', 'main.js')) && readFileSync(stamp, 'utf8').trim() === digest;
  } catch {
    return false;
  }
}

function run(command, args) {
  const bin = join(root, 'node_modules', '.bin');
  const result = spawnSync(command, args, {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` },
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

// Taken before building, so a source edited during the build makes the next start build again.
const digest = inputsDigest();
if (process.argv.includes('--digest')) {
  process.stdout.write(`${digest}\n`);
} else if (process.argv.includes('--if-changed') && upToDate(digest)) {
  process.stdout.write(
    'dist/ is up to date with the sources: not rebuilding (npm run build builds anyway)\n',
  );
} else {
  run(join(root, 'node_modules', '.bin', 'nest'), ['build']);
  run(join(root, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.ormconfig.json']);
  run(process.execPath, [join(root, 'tools', 'build-web.mjs')]);
  writeFileSync(stamp, `${digest}\n`);
}
