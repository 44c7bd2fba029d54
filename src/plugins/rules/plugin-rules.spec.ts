import { describe, expect, it } from '@jest/globals';
import {
  capabilitiesViolation,
  configSchemaViolation,
  MAX_SOURCE_FILE_BYTES,
  MAX_SOURCE_FILES,
  normaliseUrl,
  parsePluginJson,
  publicJobsViolation,
  secretKeys,
  sourceChangesViolation,
  urlViolation,
} from './plugin-rules.js';

describe('urlViolation', () => {
  it('requires a url except for source records', () => {
    for (const type of ['local', 'custom', 'repository', 'inline'] as const) {
      expect(urlViolation(type, undefined)).toMatchObject({ attr: 'url', code: 'required' });
      expect(urlViolation(type, null)).toMatchObject({ attr: 'url', code: 'required' });
      expect(urlViolation(type, '')).toMatchObject({ attr: 'url', code: 'required' });
    }
    expect(urlViolation('source', undefined)).toBeNull();
    expect(urlViolation('source', null)).toBeNull();
  });

  it.each([
    ['custom', 'https://github.com/acme/plugin'],
    ['repository', 'http://plugins.internal:8080/a/b'],
    ['source', 'https://example.com/x'],
    ['local', 'file:/srv/plugins/mine'],
    ['local', 'file:../mine'],
    ['inline', 'inline://semver-flattener'],
  ] as const)('accepts %s %s', (type, url) => {
    expect(urlViolation(type, url)).toBeNull();
  });

  it.each([
    ['custom', 'github.com/acme/plugin', 'Enter a valid http:// or https:// URL.'],
    ['custom', 'ftp://example.com/x', 'Enter a valid http:// or https:// URL.'],
    ['custom', 'https://user:pw@github.com/acme/plugin', 'The url must not carry credentials.'],
    [
      'custom',
      'https://github.com/acme/plugin?private_token=x',
      'The url must not carry a query or a fragment.',
    ],
    ['custom', 'https://github.com/acme/plugin#readme', 'The url must not carry a query or a fragment.'],
    ['custom', 'https://github.com/acme/my plugin', 'Enter a valid URL (no white space).'],
    ['local', 'https://github.com/acme/plugin', "Plugins of type 'local' take a 'file:<path>' url."],
    ['inline', 'inline://Bad Name', 'Enter a valid URL (no white space).'],
    ['inline', 'https://x.y/z', "Plugins of type 'inline' take an 'inline://<name>' url."],
  ] as const)('refuses %s %s', (type, url, detail) => {
    expect(urlViolation(type, url)).toEqual({ attr: 'url', code: 'invalid_input', detail });
  });

  it('refuses urls longer than 800 characters', () => {
    expect(urlViolation('custom', `https://example.com/${'a'.repeat(800)}`)).toMatchObject({
      code: 'max_length',
    });
  });

  it('applies the limit to the stored (percent-encoded) spelling', () => {
    const base = 'https://example.com/';
    // 300 characters as sent, 20 + 300 × 6 = 1820 once "é" is percent-encoded.
    const encoded = `${base}${'é'.repeat(300)}`;
    expect(encoded.length).toBeLessThan(800);
    expect(urlViolation('custom', encoded)).toEqual({
      attr: 'url',
      code: 'max_length',
      detail: 'Ensure this field has no more than 800 characters once normalised (percent-encoded: 1820).',
    });
    // Exactly 800 once encoded is accepted: 20 + 130 × 6 = 800.
    const longest = `${base}${'é'.repeat(130)}`;
    expect(normaliseUrl(longest)).toHaveLength(800);
    expect(urlViolation('custom', longest)).toBeNull();
    // An internationalised host grows too (punycode).
    const idn = `https://${'ü'.repeat(60)}.example/${'a'.repeat(720)}`; // 797 as sent, 803 stored
    expect(urlViolation('custom', idn)).toMatchObject({
      code: 'max_length',
    });
  });
});

describe('normaliseUrl', () => {
  it('lower-cases scheme and host and drops trailing slashes', () => {
    expect(normaliseUrl('HTTPS://GitHub.com/PostHog/Plugin/')).toBe('https://github.com/PostHog/Plugin');
    expect(normaliseUrl('https://example.com/')).toBe('https://example.com');
    expect(normaliseUrl('http://example.com:8080/a//')).toBe('http://example.com:8080/a');
  });
  it('leaves other schemes unchanged', () => {
    expect(normaliseUrl('file:/srv/x/')).toBe('file:/srv/x/');
    expect(normaliseUrl('inline://x')).toBe('inline://x');
  });
});

describe('capabilitiesViolation', () => {
  it('accepts the three known lists', () => {
    expect(capabilitiesViolation({})).toBeNull();
    expect(
      capabilitiesViolation({ methods: ['onEvent'], scheduled_tasks: ['runEveryHour'], jobs: ['x'] }),
    ).toBeNull();
  });
  it.each([
    [[], 'capabilities', 'Must be an object.'],
    [null, 'capabilities', 'Must be an object.'],
    [{ methods: 'onEvent' }, 'capabilities__methods', 'Must be a list of strings.'],
    [{ scheduled_tasks: [1] }, 'capabilities__scheduled_tasks', 'Must be a list of non-empty strings.'],
    [{ jobs: [''] }, 'capabilities__jobs', 'Must be a list of non-empty strings.'],
    [{ methods: ['a', 'a'] }, 'capabilities__methods', 'The list must not repeat a name.'],
  ])('refuses %j', (value, attr, detail) => {
    expect(capabilitiesViolation(value)).toEqual({ attr, detail, code: 'invalid_input' });
  });
  it('refuses unknown keys naming them', () => {
    expect(capabilitiesViolation({ hooks: [] })).toMatchObject({
      attr: 'capabilities__hooks',
      code: 'unknown_field',
    });
  });
});

describe('configSchemaViolation', () => {
  it('accepts a list of field objects or an object', () => {
    expect(configSchemaViolation([{ key: 'apiKey', secret: true }, { markdown: 'Hi' }])).toBeNull();
    expect(configSchemaViolation({ apiKey: { type: 'string' } })).toBeNull();
    expect(configSchemaViolation([])).toBeNull();
  });
  it.each([
    ['text', 'config_schema'],
    [null, 'config_schema'],
    [[1], 'config_schema__0'],
    [[{ key: 'a' }, { key: 3 }], 'config_schema__1__key'],
    [[{ key: 'a', secret: 'yes' }], 'config_schema__0__secret'],
  ])('refuses %j at %s', (value, attr) => {
    expect(configSchemaViolation(value)).toMatchObject({ attr });
  });
});

describe('publicJobsViolation', () => {
  it('wants an object of objects', () => {
    expect(publicJobsViolation({ exportHistory: { payload: {} } })).toBeNull();
    expect(publicJobsViolation([])).toMatchObject({ attr: 'public_jobs' });
    expect(publicJobsViolation({ exportHistory: 'x' })).toMatchObject({ attr: 'public_jobs__exportHistory' });
  });
});

describe('sourceChangesViolation', () => {
  it('accepts texts and nulls under valid names', () => {
    expect(sourceChangesViolation({ 'index.ts': 'x', 'lib/util.ts': '', 'old.ts': null }, [])).toBeNull();
  });
  it.each(['../etc/passwd', '.env', 'a//b', '/abs.ts', 'a b.ts', 'dir/', 'ü.ts'])(
    'refuses the name %j',
    (name) => {
      expect(sourceChangesViolation({ [name]: 'x' }, [])).toMatchObject({
        attr: name,
        code: 'invalid_input',
      });
    },
  );
  it('refuses values that are neither text nor null', () => {
    expect(sourceChangesViolation({ 'index.ts': 3 }, [])).toMatchObject({ attr: 'index.ts' });
    expect(sourceChangesViolation({ 'index.ts': { a: 1 } }, [])).toMatchObject({ attr: 'index.ts' });
  });
  it('limits file sizes in UTF-8 bytes', () => {
    const justFits = 'a'.repeat(MAX_SOURCE_FILE_BYTES);
    expect(sourceChangesViolation({ 'a.ts': justFits }, [])).toBeNull();
    const tooBig = 'é'.repeat(MAX_SOURCE_FILE_BYTES / 2 + 1);
    expect(sourceChangesViolation({ 'a.ts': tooBig }, [])).toMatchObject({
      attr: 'a.ts',
      code: 'max_length',
    });
  });
  it('limits the number of files after the change', () => {
    const current = Array.from({ length: MAX_SOURCE_FILES }, (_, i) => `f${i}.ts`);
    expect(sourceChangesViolation({ 'f0.ts': 'changed' }, current)).toBeNull();
    expect(sourceChangesViolation({ 'new.ts': 'x' }, current)).toMatchObject({ attr: null });
    expect(sourceChangesViolation({ 'new.ts': 'x', 'f1.ts': null }, current)).toBeNull();
  });
  it('wants an object', () => {
    expect(sourceChangesViolation(['index.ts'], [])).toMatchObject({ attr: null });
  });
});

describe('parsePluginJson', () => {
  it('reads name and config', () => {
    expect(parsePluginJson('{"name": " Mine ", "config": [{"key": "a"}], "x": 1}')).toEqual({
      value: { name: 'Mine', config: [{ key: 'a' }] },
    });
    expect(parsePluginJson('{}')).toEqual({ value: { name: undefined, config: undefined } });
  });
  it.each([
    ['{oops', 'plugin.json is not valid JSON.'],
    ['[1]', 'plugin.json must hold a JSON object.'],
    ['{"name": ""}', 'plugin.json "name" must be a string of 1 to 200 characters.'],
    ['{"name": 5}', 'plugin.json "name" must be a string of 1 to 200 characters.'],
    ['{"config": "x"}', 'plugin.json "config": Must be a list of field objects, or an object.'],
  ])('refuses %s', (text, detail) => {
    expect(parsePluginJson(text)).toEqual({
      violation: { attr: 'plugin.json', code: 'invalid_input', detail },
    });
  });
});

describe('secretKeys', () => {
  it('collects the keys marked secret in a list schema', () => {
    expect([...secretKeys([{ key: 'a', secret: true }, { key: 'b' }, { key: 'c', secret: false }])]).toEqual([
      'a',
    ]);
    expect(secretKeys({ a: { secret: true } }).size).toBe(0);
  });
});
