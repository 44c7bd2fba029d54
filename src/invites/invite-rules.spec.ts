import { describe, expect, it } from '@jest/globals';
import { combineInvites, expiresAt, isExpired, isValidEmail, normalizeEmail } from './invite-rules.js';

describe('normalizeEmail', () => {
  it.each([
    ['Jane.Doe@Example.COM', 'Jane.Doe@example.com'],
    ['  bob@ACME.io  ', 'bob@ACME.io'.replace('ACME', 'acme')],
    ['"Odd@Local"@Example.Org', '"Odd@Local"@example.org'],
    ['no-at-sign', 'no-at-sign'],
  ])('%j → %j', (input, expected) => {
    expect(normalizeEmail(input)).toBe(expected);
  });
});

describe('isValidEmail', () => {
  it.each(['a@example.com', 'first.last+tag@sub.example.co.uk', 'Admin@localhost', 'x_y@ex-ample.org'])(
    'accepts %j',
    (email) => {
      expect(isValidEmail(email)).toBe(true);
    },
  );

  it.each([
    '',
    'plain',
    '@example.com',
    'a@',
    'a@b',
    'a b@example.com',
    'a@@example.com',
    'Jane <jane@example.com>',
    'a@example..com',
    `${'a'.repeat(250)}@example.com`,
  ])('rejects %j', (email) => {
    expect(isValidEmail(email)).toBe(false);
  });
});

describe('expiry', () => {
  const created = new Date('2026-11-21T10:00:00.000Z');

  it('expires strictly after the validity period', () => {
    expect(expiresAt(created, 3).toISOString()).toBe('2026-11-24T10:00:00.000Z');
    expect(isExpired(created, new Date('2026-11-24T10:00:00.000Z'), 3)).toBe(false);
    expect(isExpired(created, new Date('2026-11-24T10:00:00.001Z'), 3)).toBe(true);
    expect(isExpired(created, created, 3)).toBe(false);
    expect(isExpired(created, new Date('2026-11-22T10:00:00.001Z'), 1)).toBe(true);
  });
});

describe('combineInvites', () => {
  it('keeps the request as it is when nothing is pending', () => {
    const requested = { level: 8, privateProjectAccess: [{ id: 3, level: 'member' as const }] };
    expect(combineInvites(requested, [])).toEqual(requested);
  });

  it('takes the highest level and the union of projects at their highest level, the new ones first', () => {
    const combined = combineInvites(
      {
        level: 1,
        privateProjectAccess: [
          { id: 5, level: 'member' },
          { id: 2, level: 'admin' },
        ],
      },
      [
        { level: 8, privateProjectAccess: [{ id: 2, level: 'member' }] },
        {
          level: 1,
          privateProjectAccess: [
            { id: 5, level: 'admin' },
            { id: 9, level: 'member' },
          ],
        },
      ],
    );
    expect(combined).toEqual({
      level: 8,
      privateProjectAccess: [
        { id: 5, level: 'admin' },
        { id: 2, level: 'admin' },
        { id: 9, level: 'member' },
      ],
    });
  });

  it('never lowers the requested level', () => {
    expect(
      combineInvites({ level: 15, privateProjectAccess: [] }, [{ level: 8, privateProjectAccess: [] }]),
    ).toEqual({
      level: 15,
      privateProjectAccess: [],
    });
  });
});
