import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { FEATURES } from '../src/features.js';

/**
 * The README a new user starts from: short enough to read, its first commands the ones that install, start and
 * test, and every command it (or a guide) tells a user to type in the runnable form, on the Node npm brings.
 *
 * @engine-independent: static checks of the repository, no database (run once, not again on a second engine).
 */
const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');
const README = read('README.md');
/** The guides whose commands a user types on a workstation (operations.md is the container's and production's). */
const GUIDES = [
  'README.md',
  'docs/api.md',
  'docs/security.md',
  'docs/recordings.md',
  'docs/batch-exports.md',
];

const bashBlocks = (text: string) => [...text.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1]);
/** The commands of a text: lines of its bash blocks, and code spans that start with a command. */
const commandsIn = (text: string) => [
  ...bashBlocks(text).flatMap((b) => b.split('\n')),
  ...[...text.matchAll(/`((?:npm|node|npx) [^`]+)`/g)].map((m) => m[1]),
];

describe('README.md', () => {
  it('stays under 14 KB', () => {
    expect(Buffer.byteLength(README)).toBeLessThan(14_000);
  });

  it('starts with npm ci && npm start, then npm test', () => {
    const first = bashBlocks(README)[0].split('\n').filter(Boolean);
    expect(first.map((l) => l.replace(/\s+#.*$/, ''))).toEqual(['npm ci && npm start', 'npm test']);
  });

  it("tours an event captured with the project's token and listed", () => {
    const events = bashBlocks(README.slice(README.indexOf('**Events.**')))[0];
    expect(events).toContain('$API/e/');
    expect(events).toContain('$TOKEN');
    expect(events).toContain('/api/projects/$PROJECT/events/');
  });
});

describe('the commands the guides give', () => {
  const cliNames = new Set([
    'help',
    ...FEATURES.flatMap((f) => [...(f.cli ?? []), ...(f.cliGroups ?? [])].map((c) => c.name)),
  ]);

  it.each(GUIDES)('%s never has a user type node dist/… (an older system Node cannot run it)', (path) => {
    const typed = commandsIn(read(path)).filter((c) => /(^|[$(\s])node dist\//.test(c));
    expect(typed).toEqual([]);
  });

  it.each(GUIDES)('%s names only CLI commands that exist (npm run cli -- <command>)', (path) => {
    const named = [...read(path).matchAll(/npm run cli -- ((?:[a-z][\w-]*)(?: [a-z][\w-]*)?)/g)].map(
      (m) => m[1],
    );
    const unknown = named.filter((n) => !cliNames.has(n) && !cliNames.has(n.split(' ')[0]));
    expect(unknown).toEqual([]);
  });

  it('the README names the CLI through npm, more than once', () => {
    expect(README.match(/npm run cli -- /g)?.length).toBeGreaterThanOrEqual(3);
  });
});
