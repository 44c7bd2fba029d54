// Bundles the browser code under web/ (the recording player and the recordings browser) into dist/web/ with
// esbuild: one script and one stylesheet per page, named by content hash, and dist/web/manifest.json mapping
// each page's logical asset name to its file. The service serves only the files the manifest names.
// Usage: node tools/build-web.mjs  (part of `npm run build`, after the TypeScript build, which empties dist/)
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { constants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'dist', 'web');

/** Logical page bundle name → entry point. */
const ENTRIES = {
  shared: 'web/player/shared-page.ts',
  replay: 'web/replay/replay-page.ts',
};

rmSync(outdir, { recursive: true, force: true });
mkdirSync(outdir, { recursive: true });

const options = {
  absWorkingDir: root,
  entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([name, path]) => [name, path])),
  outdir,
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  bundle: true,
  format: 'esm',
  platform: 'browser',
  // Browsers of the last few years; the player needs ES2020 and ResizeObserver.
  target: ['chrome100', 'firefox100', 'safari15'],
  minify: true,
  sourcemap: false,
  legalComments: 'eof',
  metafile: true,
  logLevel: 'warning',
  loader: { '.svg': 'dataurl', '.png': 'dataurl', '.woff2': 'dataurl' },
};

/**
 * The licence texts of the npm packages bundled (most ship none inside their code), appended to every script as
 * one comment, so the bundles carry the notices their licences ask for.
 */
function licenceNotices(inputs) {
  const packages = new Map();
  for (const input of Object.keys(inputs)) {
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (!match) continue;
    const dir = join(root, input.slice(0, match.index + match[0].length));
    if (packages.has(dir)) continue;
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const file = ['LICENSE', 'LICENSE.md', 'LICENSE.txt', 'license', 'LICENCE'].find((f) =>
      existsSync(join(dir, f)),
    );
    const text = file ? readFileSync(join(dir, file), 'utf8').trim() : `Licence: ${pkg.license ?? 'unknown'}`;
    packages.set(dir, `${pkg.name} ${pkg.version} (${pkg.license ?? 'unknown'})\n\n${text}`);
  }
  const body = [...packages.values()].sort().join('\n\n---\n\n').replace(/\*\//g, '* /');
  return `/*! Bundled third-party packages and their licences:\n\n${body}\n*/`;
}

// First pass (nothing written) to learn which packages end up in the bundles.
const probe = await build({ ...options, write: false });
const result = await build({ ...options, footer: { js: licenceNotices(probe.metafile.inputs) } });

const manifest = {};
for (const [file, output] of Object.entries(result.metafile.outputs)) {
  if (!output.entryPoint) continue;
  const name = Object.keys(ENTRIES).find((n) => ENTRIES[n] === output.entryPoint);
  if (!name) continue;
  manifest[`${name}.js`] = basename(file);
  if (output.cssBundle) manifest[`${name}.css`] = basename(output.cssBundle);
}
for (const name of Object.keys(ENTRIES)) {
  for (const kind of ['js', 'css']) {
    if (!manifest[`${name}.${kind}`]) throw new Error(`build-web: no ${kind} bundle for ${name}`);
  }
}
// Each bundle also gzip-compressed beside it (`<name>.gz`), sent to browsers that accept gzip.
for (const file of Object.values(manifest)) {
  const path = join(outdir, file);
  writeFileSync(`${path}.gz`, gzipSync(readFileSync(path), { level: constants.Z_BEST_COMPRESSION }));
}
writeFileSync(join(outdir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
const sizes = Object.entries(result.metafile.outputs)
  .map(([file, o]) => `${basename(file)} ${(o.bytes / 1024).toFixed(0)} KiB`)
  .join(', ');
console.log(`build-web: ${sizes}`);
