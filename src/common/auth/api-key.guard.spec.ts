import { describe, expect, it } from '@jest/globals';
import { bearerSecret } from './api-key.guard.js';

describe('bearerSecret', () => {
  it('is undefined when there is no header (not authenticated)', () => {
    expect(bearerSecret(undefined)).toBeUndefined();
    expect(bearerSecret('')).toBeUndefined();
    expect(bearerSecret('   ')).toBeUndefined();
  });

  it('extracts the secret of a bearer header', () => {
    expect(bearerSecret('Bearer x')).toBe('x');
    expect(bearerSecret('Bearer phx_abcDEF123')).toBe('phx_abcDEF123');
  });

  it.each(['bearer phx_k', 'BEARER phx_k', 'BeArEr phx_k'])(
    'reads the scheme case-insensitively in %j',
    (h) => {
      expect(bearerSecret(h)).toBe('phx_k');
    },
  );

  it('tolerates extra white space around the secret', () => {
    expect(bearerSecret('Bearer    phx_k')).toBe('phx_k');
    expect(bearerSecret('Bearer\tphx_k')).toBe('phx_k');
    expect(bearerSecret('Bearer phx_k  ')).toBe('phx_k');
  });

  it.each([
    'Basic dXNlcjpwYXNz',
    'Token phx_k',
    'Bearer',
    'Bearer ',
    'Bearerphx_k',
    'phx_k',
    'Bearer phx_a phx_b',
    ' Bearer phx_k',
    'X-Bearer phx_k',
  ])('is null (malformed) for %j', (header) => {
    expect(bearerSecret(header)).toBeNull();
  });
});
