import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../common/errors/api-error.js';
import { logBody, logHeaders, logPath, maskEmails, SCIM_LOG_BODY_MAX } from './scim-request-log.js';
import { parseFilter, parsePaging, parsePatch, scimBoolean, scimErrorBody } from './scim-protocol.js';
import { domainUserName, userFieldsFromPatch } from './scim-user-fields.js';

const USERS = ['username', 'emails.value', 'externalid', 'displayname', 'active', 'id'];

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (err) {
    return (err as ApiError).code;
  }
  return undefined;
};

describe('parseFilter', () => {
  it('reads eq comparisons joined by and, in any case, with the filtered e-mail path', () => {
    expect(
      parseFilter('userName eq "A@b.co" AND active eq True and emails[type eq "work"].value eq "x y"', USERS),
    ).toEqual([
      { attribute: 'username', value: 'A@b.co' },
      { attribute: 'active', value: true },
      { attribute: 'emails.value', value: 'x y' },
    ]);
    expect(parseFilter('urn:ietf:params:scim:schemas:core:2.0:User:externalId eq "7"', USERS)).toEqual([
      { attribute: 'externalid', value: '7' },
    ]);
  });

  it('keeps " and " inside a quoted value', () => {
    expect(parseFilter('displayName eq "Tom and Jerry"', USERS)).toEqual([
      { attribute: 'displayname', value: 'Tom and Jerry' },
    ]);
  });

  it('refuses other operators, unknown attributes and or with invalidFilter', () => {
    for (const filter of [
      'userName co "a"',
      'title eq "x"',
      'userName eq "a" or active eq true',
      'userName eq a',
    ]) {
      expect(codeOf(() => parseFilter(filter, USERS))).toBe('invalidFilter');
    }
  });
});

describe('parsePaging', () => {
  it('defaults, clamps and refuses non-integers', () => {
    expect(parsePaging({})).toEqual({ startIndex: 1, count: 100 });
    expect(parsePaging({ startIndex: '0', count: '5000' })).toEqual({ startIndex: 1, count: 1000 });
    expect(parsePaging({ count: '-3' })).toEqual({ startIndex: 1, count: 0 });
    expect(codeOf(() => parsePaging({ count: 'ten' }))).toBe('invalidValue');
  });
});

describe('PATCH dialects', () => {
  it('takes Okta’s path-less value and Entra’s capitalised ops, filtered paths and string booleans', () => {
    expect(
      userFieldsFromPatch(parsePatch({ Operations: [{ op: 'replace', value: { active: false } }] })),
    ).toEqual({
      active: false,
    });
    expect(
      userFieldsFromPatch(
        parsePatch({
          Operations: [
            { op: 'Replace', path: 'active', value: 'False' },
            { op: 'Add', path: 'name.givenName', value: ' Ada ' },
            { op: 'Replace', value: { 'name.familyName': 'L', externalId: 'e1' } },
            { op: 'Remove', path: 'displayName' },
            { op: 'Replace', path: 'emails[type eq "work"].value', value: 'ignored@x.io' },
            {
              op: 'Replace',
              path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department',
              value: 'x',
            },
          ],
        }),
      ),
    ).toEqual({ active: false, givenName: 'Ada', familyName: 'L', externalId: 'e1', displayName: '' });
  });

  it('refuses empty operations, unknown ops and a remove without a path', () => {
    expect(codeOf(() => parsePatch({ Operations: [] }))).toBe('invalidSyntax');
    expect(codeOf(() => parsePatch({ Operations: [{ op: 'copy', path: 'active' }] }))).toBe('invalidSyntax');
    expect(codeOf(() => parsePatch({ Operations: [{ op: 'remove' }] }))).toBe('noTarget');
    expect(codeOf(() => scimBoolean('yes', 'active'))).toBe('invalidValue');
  });
});

describe('domainUserName', () => {
  it('takes an address of the domain, lower-cased, and refuses others', () => {
    expect(domainUserName('Ada@Acme.com', 'acme.com')).toBe('ada@acme.com');
    expect(codeOf(() => domainUserName('ada@sub.acme.com', 'acme.com'))).toBe('invalidValue');
    expect(codeOf(() => domainUserName('ada', 'acme.com'))).toBe('invalidValue');
  });
});

describe('scimErrorBody', () => {
  it('is an RFC 7644 error with the status as a string and scimType where it applies', () => {
    expect(scimErrorBody(409, 'conflict', 'Taken.')).toEqual({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
      status: '409',
      detail: 'Taken.',
      scimType: 'uniqueness',
    });
    expect(scimErrorBody(404, 'not_found', 'No.')).not.toHaveProperty('scimType');
    expect(scimErrorBody(400, 'invalidFilter', 'Bad.').scimType).toBe('invalidFilter');
  });
});

describe('request log masking', () => {
  it('masks addresses, the credential and cookies, and cuts bodies', () => {
    expect(maskEmails('{"userName":"ada.l+x@acme.com","other":"b@c.io"}')).toBe(
      '{"userName":"***@acme.com","other":"***@c.io"}',
    );
    expect(
      logHeaders({ authorization: 'Bearer phscim_secret', cookie: 'a=b', from: 'ada@acme.com' }),
    ).toEqual({
      authorization: 'Bearer ***',
      cookie: '***',
      from: '***@acme.com',
    });
    expect(logPath('/Users?filter=userName%20eq%20%22ada%40acme.com%22')).toBe(
      '/Users?filter=userName eq "***@acme.com"',
    );
    const long = logBody('z'.repeat(SCIM_LOG_BODY_MAX + 10))!;
    expect(long.startsWith('z'.repeat(SCIM_LOG_BODY_MAX))).toBe(true);
    expect(long.endsWith('…[truncated 10 characters]')).toBe(true);
    expect(logBody('')).toBeNull();
  });

  it('stays linear on long runs without an address', () => {
    // Not a speed target (that is the bench's): a backtracking pattern would take minutes on a million
    // characters, a linear one takes tens of milliseconds, so a bound of seconds tells them apart on any load.
    const before = process.cpuUsage();
    expect(maskEmails('a'.repeat(1_000_000))).toBe('a'.repeat(1_000_000));
    const { user, system } = process.cpuUsage(before);
    expect((user + system) / 1000).toBeLessThan(10_000);
  });
});
