// Adds lockfile entries for platform-specific optional dependencies that the package registry reachable
// from the build machines does not serve (other operating systems' native binaries). Without an entry,
// `npm ci` refuses the lockfile as out of sync; with an os/cpu-restricted entry it simply skips the package
// on this platform, exactly as it would with a full entry.
// Usage: node tools/lockfile-fill-optional.mjs  (after any `npm install` that changed package-lock.json)
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const pkgs = lock.packages;
const guess = (name) => {
  const os = [
    'darwin',
    'win32',
    'linux',
    'freebsd',
    'android',
    'openharmony',
    'sunos',
    'aix',
    'netbsd',
    'openbsd',
  ].find((o) => name.includes(o) || (o === 'win32' && name.includes('windows')));
  const cpu = ['arm64', 'x64', 'ia32', 'arm', 'ppc64', 's390x', 'riscv64', 'loong64', 'wasm32'].find(
    (c) => name.split(/[-/]/).includes(c) || name.includes(`-${c}-`) || name.endsWith(`-${c}`),
  );
  return {
    os: [os === 'win32' || name.includes('windows') ? 'win32' : (os ?? 'none')],
    cpu: cpu ? [cpu] : undefined,
  };
};
let added = 0;
for (const [path, entry] of Object.entries(pkgs)) {
  const base = path === '' ? '' : `${path}/`;
  for (const [dep, range] of Object.entries(entry.optionalDependencies ?? {})) {
    const nested = `${base}node_modules/${dep}`;
    const top = `node_modules/${dep}`;
    if (pkgs[nested] || pkgs[top]) continue;
    const { os, cpu } = guess(dep);
    if (os[0] === 'none') continue;
    const version = String(range).replace(/^[\^~=]/, '');
    pkgs[top] = { version, optional: true, os, ...(cpu ? { cpu } : {}) };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(pkgs).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)),
);
writeFileSync(file, JSON.stringify(lock, null, 2) + '\n');
console.log(`lockfile: ${added} platform-specific optional entries added`);
