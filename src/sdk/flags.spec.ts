import { describe, expect, it } from '@jest/globals';
import { protocolVersion, tokenOf } from './flags-request.js';
import { flagsResponse } from './flags-response.js';
import { remoteConfigFor } from './remote-config.js';

describe('tokenOf', () => {
  it('reads token, then api_key, then $token, then the query', () => {
    expect(tokenOf({ token: 'a', api_key: 'b', $token: 'c' }, 'd')).toBe('a');
    expect(tokenOf({ api_key: 'b', $token: 'c' }, 'd')).toBe('b');
    expect(tokenOf({ $token: 'c' }, 'd')).toBe('c');
    expect(tokenOf({}, 'd')).toBe('d');
  });

  it('ignores empty and non-string values, arrays and non-objects', () => {
    expect(tokenOf({ token: '', api_key: 5 })).toBeNull();
    expect(tokenOf([{ token: 'a' }])).toBeNull();
    expect(tokenOf('token')).toBeNull();
    expect(tokenOf(null, ['x'])).toBeNull();
  });
});

describe('protocolVersion', () => {
  it.each([
    [undefined, 1],
    ['', 1],
    ['abc', 1],
    ['0', 1],
    ['-2', 1],
    ['2', 2],
    ['4', 4],
    [['3'], 1],
  ])('%p → %p', (v, expected) => {
    expect(protocolVersion(v)).toBe(expected);
  });
});

describe('flagsResponse', () => {
  const config = remoteConfigFor({ apiToken: 'phc_a', sessionRecordingOptIn: true });
  const flagKeys = (r: object) =>
    ['featureFlags', 'featureFlagPayloads', 'flags'].filter((k) => k in r).map((k) => [k, (r as never)[k]]);

  it('shapes the empty flags by route and version', () => {
    expect(flagKeys(flagsResponse(config, 'decide', 1))).toEqual([['featureFlags', []]]);
    expect(flagKeys(flagsResponse(config, 'decide', 2))).toEqual([['featureFlags', {}]]);
    expect(flagKeys(flagsResponse(config, 'decide', 3))).toEqual([
      ['featureFlags', {}],
      ['featureFlagPayloads', {}],
    ]);
    expect(flagKeys(flagsResponse(config, 'decide', 4))).toEqual([
      ['featureFlags', {}],
      ['featureFlagPayloads', {}],
      ['flags', {}],
    ]);
    expect(flagKeys(flagsResponse(config, 'flags', 1))).toEqual(flagKeys(flagsResponse(config, 'decide', 4)));
  });

  it('carries the whole remote config', () => {
    const response = flagsResponse(config, 'flags', 2);
    expect(response).toMatchObject(config);
    expect(response.errorsWhileComputingFlags).toBe(false);
  });
});
