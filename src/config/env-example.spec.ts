// Registers the features' settings (SETTINGS, the default table of parseConfig).
import '../features.js';
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { parseConfig, SETTINGS } from './config.js';

/** Keeps .env.example in step with SETTINGS: same variables, same order, their descriptions and defaults. */

interface Assignment {
  name: string;
  value: string;
  commented: boolean;
  /** The comment lines since the previous assignment, joined with spaces. */
  comment: string;
}

const settings = SETTINGS as Record<string, { default: unknown; description: string }>;

/** `NAME=value`, `# NAME=value` or `export NAME=value`; a value may be quoted or followed by ` # comment`. */
const ASSIGNMENT = /^(#\s*)?(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$/;

function unquote(raw: string): string {
  const v = raw.trim();
  const quoted = /^(['"])(.*)\1$/.exec(v);
  return quoted ? quoted[2] : v.replace(/\s+#.*$/, '');
}

function readEnvExample(): Assignment[] {
  const text = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
  const out: Assignment[] = [];
  let comment: string[] = [];
  for (const line of text.split(/\r?\n/).map((l) => l.trim())) {
    const m = ASSIGNMENT.exec(line);
    if (m) {
      out.push({
        name: m[2],
        value: unquote(m[3]),
        commented: m[1] !== undefined,
        comment: comment.join(' '),
      });
      comment = [];
    } else if (line.startsWith('#')) {
      comment.push(line.replace(/^#\s?/, ''));
    } else if (line === '') {
      comment = [];
    }
  }
  return out;
}

describe('.env.example', () => {
  const assignments = readEnvExample();
  const names = assignments.map((a) => a.name);
  // Names that are not settings fail the first test; the others check only the known ones.
  const known = assignments.filter((a) => a.name in settings);

  it('names exactly the settings of SETTINGS, each once', () => {
    expect([...new Set(names)].sort()).toEqual(Object.keys(SETTINGS).sort());
    expect(names).toHaveLength(new Set(names).size);
  });

  it('lists them in the order of SETTINGS', () => {
    expect(names).toEqual(Object.keys(SETTINGS));
  });

  it('describes each setting with its description', () => {
    for (const a of known) {
      expect({ name: a.name, comment: a.comment }).toEqual({
        name: a.name,
        comment: expect.stringContaining(settings[a.name].description),
      });
    }
  });

  it('has uncommented values that parseConfig accepts', () => {
    const env = Object.fromEntries(assignments.filter((a) => !a.commented).map((a) => [a.name, a.value]));
    expect(() => parseConfig(env)).not.toThrow();
  });

  it('shows the default of every commented-out setting', () => {
    for (const a of known.filter((x) => x.commented)) {
      expect({
        name: a.name,
        value: parseConfig({ [a.name]: a.value })[a.name as keyof typeof SETTINGS],
      }).toEqual({
        name: a.name,
        value: settings[a.name].default,
      });
    }
  });
});
