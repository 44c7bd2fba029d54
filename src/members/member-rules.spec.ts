import { describe, expect, it } from '@jest/globals';
import {
  LAST_OWNER,
  lastOwnerViolation,
  levelChangeViolation,
  MEMBER_RULES,
  memberChangeRefusal,
  removalViolation,
} from './member-rules.js';

const M = 1;
const A = 8;
const O = 15;
const side = (userId: number, level: number) => ({ userId, level });

describe('levelChangeViolation', () => {
  it.each([
    // actor level, target level, new level, expected
    [O, M, A, null],
    [O, M, O, null],
    [O, A, M, null],
    [O, O, A, null],
    [A, M, A, null],
    [A, A, M, null],
    [A, M, M, null],
    [A, M, O, MEMBER_RULES.OWNER_ONLY_BY_OWNER],
    [A, O, M, MEMBER_RULES.TARGET_ABOVE],
    [A, O, A, MEMBER_RULES.TARGET_ABOVE],
    [M, M, A, MEMBER_RULES.NOT_ABOVE_OWN],
    [M, M, O, MEMBER_RULES.OWNER_ONLY_BY_OWNER],
    [M, M, M, MEMBER_RULES.ADMIN_TO_EDIT],
    [M, A, M, MEMBER_RULES.ADMIN_TO_EDIT],
  ])('actor %i, target %i → %i: %s', (actorLevel, targetLevel, newLevel, expected) => {
    expect(levelChangeViolation(side(1, actorLevel), side(2, targetLevel), newLevel)).toBe(expected);
  });

  it('refuses any change of one’s own level first, even for owners', () => {
    for (const level of [M, A, O]) {
      for (const newLevel of [M, A, O]) {
        expect(levelChangeViolation(side(1, level), side(1, level), newLevel)).toBe(MEMBER_RULES.OWN_LEVEL);
      }
    }
  });

  it('checks the rules in the order of docs/decisions.md §5', () => {
    // Making someone owner as an admin who cannot edit that target either: the owner rule speaks first.
    expect(levelChangeViolation(side(1, A), side(2, O), O)).toBe(MEMBER_RULES.OWNER_ONLY_BY_OWNER);
    // A member raising someone above itself: "lower or equal" speaks before "only admins edit".
    expect(levelChangeViolation(side(1, M), side(2, M), A)).toBe(MEMBER_RULES.NOT_ABOVE_OWN);
  });
});

describe('removalViolation', () => {
  it.each([
    [O, O, null],
    [O, A, null],
    [A, A, null],
    [A, M, null],
    [A, O, MEMBER_RULES.TARGET_ABOVE],
    [M, M, MEMBER_RULES.ADMIN_TO_EDIT],
    [M, A, MEMBER_RULES.ADMIN_TO_EDIT],
  ])('actor %i removing target %i: %s', (actorLevel, targetLevel, expected) => {
    expect(removalViolation(side(1, actorLevel), side(2, targetLevel))).toBe(expected);
  });

  it('always lets a member leave', () => {
    for (const level of [M, A, O]) expect(removalViolation(side(1, level), side(1, level))).toBeNull();
  });
});

describe('lastOwnerViolation', () => {
  it('refuses the only owner leaving, being removed or demoted', () => {
    expect(lastOwnerViolation(1, side(1, O), null, [1])).toBe(LAST_OWNER.LEAVE);
    expect(lastOwnerViolation(2, side(1, O), null, [1])).toBe(LAST_OWNER.REMOVE);
    expect(lastOwnerViolation(2, side(1, O), A, [1])).toBe(LAST_OWNER.DEMOTE);
    expect(lastOwnerViolation(2, side(1, O), M, [1])).toBe(LAST_OWNER.DEMOTE);
  });

  it('allows it while another owner remains', () => {
    expect(lastOwnerViolation(1, side(1, O), null, [1, 3])).toBeNull();
    expect(lastOwnerViolation(3, side(1, O), A, [3, 1])).toBeNull();
  });

  it('does not concern non-owners or a level kept at owner', () => {
    expect(lastOwnerViolation(1, side(1, A), null, [2])).toBeNull();
    expect(lastOwnerViolation(1, side(1, M), null, [])).toBeNull();
    expect(lastOwnerViolation(2, side(1, O), O, [1])).toBeNull();
  });
});

describe('memberChangeRefusal', () => {
  it('tells the last owner changing its own level or leaving that it is the last owner (400)', () => {
    expect(memberChangeRefusal(side(1, O), side(1, O), A, [1])).toEqual({
      status: 400,
      detail: LAST_OWNER.DEMOTE,
    });
    expect(memberChangeRefusal(side(1, O), side(1, O), null, [1])).toEqual({
      status: 400,
      detail: LAST_OWNER.LEAVE,
    });
  });

  it('keeps the level rules first otherwise', () => {
    expect(memberChangeRefusal(side(1, O), side(1, O), A, [1, 2])).toEqual({
      status: 403,
      detail: MEMBER_RULES.OWN_LEVEL,
    });
    expect(memberChangeRefusal(side(1, O), side(1, O), O, [1])).toEqual({
      status: 403,
      detail: MEMBER_RULES.OWN_LEVEL,
    });
    expect(memberChangeRefusal(side(2, A), side(1, O), null, [1])).toEqual({
      status: 403,
      detail: MEMBER_RULES.TARGET_ABOVE,
    });
    expect(memberChangeRefusal(side(2, A), side(1, O), M, [1])).toEqual({
      status: 403,
      detail: MEMBER_RULES.TARGET_ABOVE,
    });
  });

  it('lets owners leave and demote each other while another owner remains', () => {
    expect(memberChangeRefusal(side(1, O), side(1, O), null, [1, 2])).toBeNull();
    expect(memberChangeRefusal(side(2, O), side(1, O), A, [1, 2])).toBeNull();
    expect(memberChangeRefusal(side(2, O), side(1, O), null, [1, 2])).toBeNull();
    expect(memberChangeRefusal(side(2, A), side(3, M), null, [1])).toBeNull();
  });

  it('falls back to the last-owner rule for another member when no level rule objects (defensive)', () => {
    // Unreachable through consistent data (only an owner may edit an owner), but never leaves no owner.
    expect(memberChangeRefusal(side(2, O), side(1, O), A, [1])).toEqual({
      status: 400,
      detail: LAST_OWNER.DEMOTE,
    });
    expect(memberChangeRefusal(side(2, O), side(1, O), null, [1])).toEqual({
      status: 400,
      detail: LAST_OWNER.REMOVE,
    });
  });
});
