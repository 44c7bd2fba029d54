import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';

/**
 * package.json's `allowScripts` is the reviewed list of dependencies with install scripts (README,
 * "Prerequisites"): `true` runs the script, `false` skips it. npm 11 warns about every package with an install
 * script it does not list (npm 12 skips them), so the list must name exactly the packages of package-lock.json
 * that have one: a dependency update that brings a new install script fails here instead of bringing the
 * warning back at the next `npm ci`, and a package that left the lockfile leaves the list too.
 *
 * @engine-independent: static checks of the repository, no database (run once, not again on a second engine).
 */

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  allowScripts?: Record<string, unknown>;
};
const lock = JSON.parse(readFileSync(new URL('../package-lock.json', import.meta.url), 'utf8')) as {
  lockfileVersion: number;
  packages: Record<string, { name?: string; hasInstallScript?: boolean; link?: boolean }>;
};

/** The package name of a lockfile entry: its `name` (an alias), else the path after the last `node_modules/`. */
function packageName(path: string, entry: { name?: string }): string {
  return entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
}

/** The names of the lockfile's packages with an install script (the project itself left out). */
function withInstallScripts(packages: typeof lock.packages): string[] {
  const names = Object.entries(packages)
    .filter(([path, entry]) => path !== '' && !entry.link && entry.hasInstallScript === true)
    .map(([path, entry]) => packageName(path, entry));
  return [...new Set(names)].sort();
}

describe("package.json's allowScripts", () => {
  const allowScripts = pkg.allowScripts ?? {};

  it('is a map of package names to true (reviewed, runs) or false (reviewed, skipped)', () => {
    expect(lock.lockfileVersion).toBeGreaterThanOrEqual(2);
    expect(Object.keys(allowScripts).length).toBeGreaterThan(0);
    for (const [name, allowed] of Object.entries(allowScripts)) {
      expect([name, typeof allowed]).toEqual([name, 'boolean']);
      // Bare names, as npm matches them: no version ranges (a range would stop matching at the next update).
      expect(name).toMatch(/^(@[a-z0-9._-]+\/)?[a-z0-9._-]+$/);
    }
  });

  it('lists exactly the packages of package-lock.json that have an install script', () => {
    const inLock = withInstallScripts(lock.packages);
    const listed = Object.keys(allowScripts).sort();
    expect({
      unreviewed: inLock.filter((n) => !listed.includes(n)),
      gone: listed.filter((n) => !inLock.includes(n)),
    }).toEqual({ unreviewed: [], gone: [] });
  });

  it('reads names from the lockfile as npm writes them (nested, scoped, aliased)', () => {
    expect(
      withInstallScripts({
        '': { hasInstallScript: true },
        'node_modules/esbuild': { hasInstallScript: true },
        'node_modules/a/node_modules/@scope/b': { hasInstallScript: true },
        'node_modules/alias': { name: 'real-name', hasInstallScript: true },
        'node_modules/plain': {},
        'node_modules/linked': { link: true, hasInstallScript: true },
      }),
    ).toEqual(['@scope/b', 'esbuild', 'real-name']);
  });
});
