import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { SETTINGS } from './config.js';
import { FEATURES } from '../features.js';
import { formatDefault, renderConfigurationDoc } from './config-docs.js';

describe('docs/configuration.md', () => {
  it('is the page rendered from SETTINGS (regenerate: npm run build && npm run docs:config)', () => {
    const committed = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    expect(committed).toBe(renderConfigurationDoc(FEATURES));
  });

  it('lists each feature with the settings its manifest names, and refuses an unknown name', () => {
    const page = renderConfigurationDoc(FEATURES);
    expect(page).toMatch(/^\| `domains` +\| `DNS_SERVERS`, `DNS_TIMEOUT_MS` +\| +\|$/m);
    expect(page).toContain('`recording-purge` (every `RECORDING_PURGE_INTERVAL_SECONDS` seconds)');
    expect(() => renderConfigurationDoc([{ name: 'x', settings: { NO_SUCH_SETTING: {} } }])).toThrow(
      'feature x names an unknown setting NO_SUCH_SETTING',
    );
  });

  it('has one row per setting, in the order of SETTINGS, with its default and description', () => {
    const rows = renderConfigurationDoc()
      .split('\n')
      .filter((l) => /^\| `[A-Z0-9_]+` /.test(l))
      .map((l) => l.split(' | ').map((c) => c.replace(/^\| /, '').trim()));
    expect(rows.map((r) => r[0])).toEqual(Object.keys(SETTINGS).map((n) => `\`${n}\``));
    const port = rows.find((r) => r[0] === '`PORT`')!;
    expect(port.slice(1, 3)).toEqual(['`3000`', 'integer 0–65535']);
    expect(rows.find((r) => r[0] === '`BODY_LIMIT`')![1]).toBe('`1mb`');
    expect(rows.find((r) => r[0] === '`DATABASE_URL`')![1]).toBe('`unset`');
    expect(rows.find((r) => r[0] === '`LOG_FORMAT`')![2]).toBe('json, pretty');
  });
});

describe('formatDefault', () => {
  it.each([
    [null, '', 'unset'],
    ['', 'text', 'empty'],
    [1024 * 1024, 'size: 512kb, 1mb, bytes', '1mb'],
    [25 * 1024 * 1024, 'size: 512kb, 1mb, bytes', '25mb'],
    [1536, 'size: 512kb, 1mb, bytes', '1536'],
    [1000, 'integer 1–100000', '1000'],
    [false, 'true or false', 'false'],
    [['a', 'b'], '', 'a,b'],
  ])('%p (%s) is %p', (value, accepts, shown) => {
    expect(formatDefault(value, accepts)).toBe(shown);
  });
});
