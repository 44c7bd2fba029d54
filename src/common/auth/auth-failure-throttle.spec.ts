// Registers the features' settings (the default table of AppConfig.fromEnv).
import '../../features.js';
import { describe, expect, it } from '@jest/globals';
import { AppConfig } from '../../config/config.js';
import { sha256Hex } from '../crypto/tokens.js';
import { FixedClock } from '../time/clock.js';
import { AuthFailureThrottle } from './auth-failure-throttle.js';
import { PresentedSecret } from './presented-secret.js';

/** A new PresentedSecret each time: the throttle knows a key by its digest, not by the object. */
const key = (secret: string) => new PresentedSecret(secret);

function throttle(env: Record<string, string>) {
  const clock = new FixedClock(new Date('2026-01-01T00:00:00Z'));
  const config = AppConfig.fromEnv({
    API_AUTH_FAILURE_LIMIT: '3',
    API_AUTH_FAILURE_WINDOW_SECONDS: '60',
    ...env,
  });
  return { clock, throttle: new AuthFailureThrottle(config, clock) };
}

describe('AuthFailureThrottle', () => {
  it('blocks an address once it reached the limit, until its window ends', () => {
    const { clock, throttle: t } = throttle({});
    for (let i = 0; i < 2; i++) t.recordFailure('10.0.0.1');
    expect(t.blockedFor('10.0.0.1')).toBe(0);
    t.recordFailure('10.0.0.1');
    expect(t.blockedFor('10.0.0.1')).toBe(60);
    // Other addresses are not affected.
    expect(t.blockedFor('10.0.0.2')).toBe(0);
    clock.advance(59_500);
    expect(t.blockedFor('10.0.0.1')).toBe(1);
    clock.advance(500);
    expect(t.blockedFor('10.0.0.1')).toBe(0);
    // A new window starts from zero.
    t.recordFailure('10.0.0.1');
    expect(t.blockedFor('10.0.0.1')).toBe(0);
  });

  it('is off with a limit of 0', () => {
    const { throttle: t } = throttle({ API_AUTH_FAILURE_LIMIT: '0' });
    for (let i = 0; i < 100; i++) t.recordFailure('10.0.0.1');
    expect(t.blockedFor('10.0.0.1')).toBe(0);
    expect(t.size).toBe(0);
  });

  it('tracks at most API_AUTH_FAILURE_MAX_ADDRESSES, dropping expired windows, then the oldest', () => {
    const { clock, throttle: t } = throttle({ API_AUTH_FAILURE_MAX_ADDRESSES: '3' });
    for (const a of ['a', 'b']) for (let i = 0; i < 3; i++) t.recordFailure(a);
    clock.advance(30_000);
    for (let i = 0; i < 3; i++) t.recordFailure('c');
    expect(t.size).toBe(3);
    // Full: the oldest tracked address ('a') makes room.
    t.recordFailure('d');
    expect(t.size).toBe(3);
    expect(t.blockedFor('a')).toBe(0);
    expect(t.blockedFor('b')).toBe(30);
    expect(t.blockedFor('c')).toBe(60);
    // Once 'b' has expired, a new address takes its place and 'c' is kept.
    clock.advance(30_000);
    t.recordFailure('e');
    expect(t.size).toBe(3);
    expect(t.blockedFor('c')).toBe(30);
    // A million distinct addresses still leave only three tracked.
    for (let i = 0; i < 1_000_000; i++) t.recordFailure(`x${i}`);
    expect(t.size).toBe(3);
  });

  it('remembers keys that authenticated for an hour, at most API_AUTH_FAILURE_MAX_ADDRESSES of them', () => {
    const { clock, throttle: t } = throttle({ API_AUTH_FAILURE_MAX_ADDRESSES: '2' });
    expect(t.knownValid(key('phx_a'))).toBe(false);
    t.recordValid(key('phx_a'));
    expect(t.knownValid(key('phx_a'))).toBe(true);
    expect(t.knownValid(key('phx_b'))).toBe(false);
    // Full: the key remembered first is forgotten first.
    clock.advance(1_000);
    t.recordValid(key('phx_b'));
    t.recordValid(key('phx_c'));
    expect(t.knownValid(key('phx_a'))).toBe(false);
    expect(t.knownValid(key('phx_b'))).toBe(true);
    // Forgotten when it no longer authenticates, and an hour after it last did.
    t.forgetValid(key('phx_b'));
    expect(t.knownValid(key('phx_b'))).toBe(false);
    clock.advance(3_599_000);
    expect(t.knownValid(key('phx_c'))).toBe(true);
    clock.advance(1_000);
    expect(t.knownValid(key('phx_c'))).toBe(false);
  });

  it('remembers a key by the digest the lookup computed, and computes none while it remembers no key', () => {
    const { throttle: t } = throttle({});
    const presented = key('phx_a');
    // Nothing remembered: neither asking nor forgetting needs the digest.
    expect(t.knownValid(presented)).toBe(false);
    t.forgetValid(presented);
    expect(Object.values(presented)).not.toContain(sha256Hex('phx_a'));
    // The digest is the one the key lookup uses (sha256Hex, as stored in the keys' tables), computed once.
    expect(presented.digest).toBe(sha256Hex('phx_a'));
    expect(Object.values(presented)).toContain(sha256Hex('phx_a'));
    t.recordValid(presented);
    expect(t.knownValid(key('phx_a'))).toBe(true);
  });

  it('remembers nothing with a limit of 0', () => {
    const { throttle: t } = throttle({ API_AUTH_FAILURE_LIMIT: '0' });
    t.recordValid(key('phx_a'));
    expect(t.knownValid(key('phx_a'))).toBe(false);
  });
});
