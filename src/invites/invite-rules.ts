import { isEmail } from 'class-validator';

export const TARGET_EMAIL_MAX_LENGTH = 254;
export const FIRST_NAME_MAX_LENGTH = 30;
export const MESSAGE_MAX_LENGTH = 1000;
export const BULK_MAX_INVITES = 20;
const DAY_MS = 24 * 60 * 60 * 1000;

/** Trims the address and lower-cases its domain part (the local part keeps its case). */
export function normalizeEmail(value: string): string {
  const email = value.trim();
  const at = email.lastIndexOf('@');
  return at < 0 ? email : email.slice(0, at + 1) + email.slice(at + 1).toLowerCase();
}

/** A deliverable-looking address: `local@domain.tld` (or `@localhost`), no display name, no spaces. */
export function isValidEmail(value: string): boolean {
  if (value.length > TARGET_EMAIL_MAX_LENGTH) return false;
  if (/@localhost$/i.test(value)) return isEmail(value, { require_tld: false });
  return isEmail(value);
}

/** When an invite created at `createdAt` expires. */
export function expiresAt(createdAt: Date, validityDays: number): Date {
  return new Date(createdAt.getTime() + validityDays * DAY_MS);
}

/** Expired once `created_at` is more than `validityDays` days before `now` (docs/decisions.md §6). */
export function isExpired(createdAt: Date, now: Date, validityDays: number): boolean {
  return now.getTime() > expiresAt(createdAt, validityDays).getTime();
}

/** What an invite grants: its membership level and its project access. */
export interface InviteGrant {
  level: number;
  privateProjectAccess: { id: number; level: 'member' | 'admin' }[];
}

const PROJECT_LEVEL_RANK = { member: 1, admin: 2 } as const;

/**
 * `combine_pending_invites` (PostHog's rule): the new invite takes the highest level among itself and the
 * address's pending invites, and the union of their project access, each project at the highest level granted
 * (the new invite's projects first, in its order, then the others' in theirs).
 */
export function combineInvites(requested: InviteGrant, pending: readonly InviteGrant[]): InviteGrant {
  const access = new Map<number, 'member' | 'admin'>();
  for (const grant of [requested, ...pending]) {
    for (const { id, level } of grant.privateProjectAccess) {
      const current = access.get(id);
      if (!current || PROJECT_LEVEL_RANK[level] > PROJECT_LEVEL_RANK[current]) access.set(id, level);
    }
  }
  return {
    level: Math.max(requested.level, ...pending.map((p) => p.level)),
    privateProjectAccess: [...access].map(([id, level]) => ({ id, level })),
  };
}
