import { describe, expect, it } from '@jest/globals';
import { FEATURES } from '../features.js';
import { AppConfig, assembleSettings, ConfigError, int, parseConfig, setting, SETTINGS } from './config.js';

describe('the settings table assembled from the features', () => {
  it('puts the core settings first, then each feature’s in the order of FEATURES', () => {
    const names = Object.keys(SETTINGS);
    expect(names.slice(0, 2)).toEqual(['NODE_ENV', 'HOST']);
    expect(names.indexOf('PLUGIN_REPOSITORY_URL')).toBeGreaterThan(names.indexOf('SWAGGER_ENABLED'));
    expect(names.indexOf('DNS_SERVERS')).toBeLessThan(names.indexOf('PLUGIN_REPOSITORY_URL'));
  });

  it('refuses a setting declared twice', () => {
    expect(() =>
      assembleSettings([{ name: 'x', settings: { PORT: setting(int(0, 1), 0, 'again') } }]),
    ).toThrow('setting PORT of feature x is already declared by the core settings');
    const twice = { X_ONE: setting(int(0, 1), 0, 'one') };
    expect(() =>
      assembleSettings([
        { name: 'a', settings: twice },
        { name: 'b', settings: twice },
      ]),
    ).toThrow('setting X_ONE of feature b is already declared by feature a');
  });

  it('parses an added feature’s settings with the others, every error in one report', () => {
    const table = assembleSettings([
      ...FEATURES,
      { name: 'extra', settings: { EXTRA_LIMIT: setting(int(1, 10), 5, 'An extra limit.') } },
    ]);
    expect(parseConfig({ EXTRA_LIMIT: '7' }, table)).toMatchObject({ EXTRA_LIMIT: 7, PORT: 3000 });
    let error: unknown;
    try {
      parseConfig({ EXTRA_LIMIT: '11', PORT: 'x', PLUGIN_REPOSITORY_TIMEOUT_MS: '1' }, table);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems.map((p) => p.split('=')[0]).sort()).toEqual([
      'EXTRA_LIMIT',
      'PLUGIN_REPOSITORY_TIMEOUT_MS',
      'PORT',
    ]);
    expect(AppConfig.fromEnv({ EXTRA_LIMIT: '3' }, table).values).toMatchObject({ EXTRA_LIMIT: 3 });
  });
});
