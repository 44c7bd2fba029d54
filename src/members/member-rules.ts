import { MembershipLevel } from '../common/vocabulary/membership-level.js';

/** The 403 details of docs/decisions.md §5, word for word (PostHog's). */
export const MEMBER_RULES = {
  OWN_LEVEL: "You can't change your own access level.",
  OWNER_ONLY_BY_OWNER: "You can only make another member owner if you're this organization's owner.",
  NOT_ABOVE_OWN: 'You can only change access level of others to lower or equal to your current one.',
  ADMIN_TO_EDIT: 'You can only edit others if you are an admin.',
  TARGET_ABOVE: 'You can only edit others with level lower or equal to you.',
} as const;

/** The 400 details of the last-owner rule. */
export const LAST_OWNER = {
  LEAVE: "The organization's last owner cannot leave it; make another member owner first.",
  REMOVE: "The organization's last owner cannot be removed; make another member owner first.",
  DEMOTE: "The organization's last owner cannot be demoted; make another member owner first.",
} as const;

export interface MemberSide {
  userId: number;
  level: number;
}

/**
 * Why `actor` may not set `target`'s level to `newLevel` (docs/decisions.md §5, checked in this order), or null when it
 * may. The last-owner rule is separate ({@link lastOwnerViolation}).
 */
export function levelChangeViolation(actor: MemberSide, target: MemberSide, newLevel: number): string | null {
  if (actor.userId === target.userId) return MEMBER_RULES.OWN_LEVEL;
  if (newLevel === MembershipLevel.OWNER && actor.level !== MembershipLevel.OWNER) {
    return MEMBER_RULES.OWNER_ONLY_BY_OWNER;
  }
  if (newLevel > actor.level) return MEMBER_RULES.NOT_ABOVE_OWN;
  return editOthersViolation(actor, target);
}

/** Why `actor` may not remove `target` from the organization, or null. Leaving (oneself) is always allowed. */
export function removalViolation(actor: MemberSide, target: MemberSide): string | null {
  if (actor.userId === target.userId) return null;
  return editOthersViolation(actor, target);
}

function editOthersViolation(actor: MemberSide, target: MemberSide): string | null {
  if (actor.level < MembershipLevel.ADMIN) return MEMBER_RULES.ADMIN_TO_EDIT;
  if (target.level > actor.level) return MEMBER_RULES.TARGET_ABOVE;
  return null;
}

/**
 * The 400 detail when the change would leave the organization without an owner: `target` is its only owner
 * and is leaving, being removed (`newLevel` null) or demoted. `ownerIds` are the user ids of every owner.
 */
export function lastOwnerViolation(
  actorUserId: number,
  target: MemberSide,
  newLevel: number | null,
  ownerIds: readonly number[],
): string | null {
  if (target.level !== MembershipLevel.OWNER) return null;
  if (newLevel === MembershipLevel.OWNER) return null;
  if (ownerIds.some((id) => id !== target.userId)) return null;
  if (newLevel !== null) return LAST_OWNER.DEMOTE;
  return actorUserId === target.userId ? LAST_OWNER.LEAVE : LAST_OWNER.REMOVE;
}

/** A refused member change: 403 (a level rule) or 400 (the last-owner rule), with its detail. */
export interface MemberChangeRefusal {
  status: 400 | 403;
  detail: string;
}

/**
 * Whether `actor` may set `target`'s level to `newLevel`, or remove it (`newLevel` null; the actor itself:
 * leaving). The level rules come first, except that an owner changing its own level or leaving is told it is
 * the last owner (400) before being told it cannot change its own level (403): that is the one way the last
 * owner could lose ownership, and the more useful answer.
 */
export function memberChangeRefusal(
  actor: MemberSide,
  target: MemberSide,
  newLevel: number | null,
  ownerIds: readonly number[],
): MemberChangeRefusal | null {
  const lastOwner = lastOwnerViolation(actor.userId, target, newLevel, ownerIds);
  if (lastOwner && actor.userId === target.userId) return { status: 400, detail: lastOwner };
  const denied =
    newLevel === null ? removalViolation(actor, target) : levelChangeViolation(actor, target, newLevel);
  if (denied) return { status: 403, detail: denied };
  return lastOwner ? { status: 400, detail: lastOwner } : null;
}
