import type { MailMessage } from '../common/mail/mailer.js';

export interface InvitationEmailInput {
  inviteId: string;
  targetEmail: string;
  firstName: string;
  level: number;
  message: string | null;
  organizationName: string;
  inviter: { firstName: string; lastName: string; email: string } | null;
  expiresAt: Date;
  /** PUBLIC_URL, without a trailing slash. */
  publicUrl: string;
}

const LEVEL_NAMES: Record<number, string> = { 1: 'a member', 8: 'an admin', 15: 'an owner' };

/** One line: header values and quoted names never carry line breaks. */
const oneLine = (s: string) => s.replace(/[\r\n\t]+/g, ' ').trim();

/** How the inviter is named: "First Last", else the e-mail address. */
export function inviterName(inviter: InvitationEmailInput['inviter']): string {
  if (!inviter) return 'Someone';
  return oneLine(`${inviter.firstName} ${inviter.lastName}`) || inviter.email;
}

/**
 * The invitation e-mail: the subject names the inviter and the organization; the body adds the level, the
 * inviter's message, the expiry and how to accept — this service has no web pages, so accepting is the API
 * call `POST /api/invites/<id>/accept` with a personal API key of the invited address.
 */
export function invitationEmail(input: InvitationEmailInput): MailMessage {
  const inviter = inviterName(input.inviter);
  const inviterWithAddress =
    input.inviter && inviter !== input.inviter.email ? `${inviter} (${input.inviter.email})` : inviter;
  const organization = oneLine(input.organizationName);
  const acceptUrl = `${input.publicUrl}/api/invites/${input.inviteId}/accept/`;
  const lines = [
    `Hi ${oneLine(input.firstName) || 'there'},`,
    '',
    `${inviterWithAddress} invited you to join the organization "${organization}" as ${LEVEL_NAMES[input.level] ?? `level ${input.level}`}.`,
  ];
  if (input.message?.trim()) {
    lines.push(
      '',
      `${inviter} wrote:`,
      '',
      ...input.message
        .trim()
        .split(/\r?\n/)
        .map((l) => `> ${l}`),
    );
  }
  lines.push(
    '',
    'To accept, call the API with a personal API key of the user with this e-mail address',
    `(${input.targetEmail}); the key needs the scope organization_member:write:`,
    '',
    `  curl -X POST -H "Authorization: Bearer <your personal API key>" ${acceptUrl}`,
    '',
    `Invite id: ${input.inviteId}`,
    `The invite expires on ${input.expiresAt.toISOString()}.`,
    'If you have no key yet, ask the operator of this service to create one for your address.',
    '',
  );
  return {
    to: input.targetEmail,
    subject: `${inviter} invited you to join ${organization}`,
    text: lines.join('\n'),
  };
}
