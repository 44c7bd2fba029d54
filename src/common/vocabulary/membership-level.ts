/**
 * Membership levels (docs/decisions.md §3): the vocabulary of organization roles, read by every layer (the
 * membership entity, the services that check roles, the DTOs that show them), so it lives below all of them.
 */
export const MembershipLevel = { MEMBER: 1, ADMIN: 8, OWNER: 15 } as const;
export type MembershipLevel = (typeof MembershipLevel)[keyof typeof MembershipLevel];
export const MEMBERSHIP_LEVELS: readonly number[] = Object.values(MembershipLevel);
