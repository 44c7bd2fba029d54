import { describe, expect, it } from '@jest/globals';
import { invitationEmail, type InvitationEmailInput, inviterName } from './invitation-email.js';

const base: InvitationEmailInput = {
  inviteId: '0b6f1c1e-6f0a-4a55-9d0e-3c5a0c8d2b11',
  targetEmail: 'Jane@example.com',
  firstName: 'Jane',
  level: 8,
  message: 'Welcome aboard!\nSee you soon.',
  organizationName: 'Acme',
  inviter: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@acme.com' },
  expiresAt: new Date('2026-11-24T10:00:00.000Z'),
  publicUrl: 'https://posthog.example.com',
};

describe('invitationEmail', () => {
  it('names the inviter and organization in the subject, and says how to accept in the body', () => {
    const mail = invitationEmail(base);
    expect(mail.to).toBe('Jane@example.com');
    expect(mail.subject).toBe('Ada Lovelace invited you to join Acme');
    expect(mail.text).toBe(
      [
        'Hi Jane,',
        '',
        'Ada Lovelace (ada@acme.com) invited you to join the organization "Acme" as an admin.',
        '',
        'Ada Lovelace wrote:',
        '',
        '> Welcome aboard!',
        '> See you soon.',
        '',
        'To accept, call the API with a personal API key of the user with this e-mail address',
        '(Jane@example.com); the key needs the scope organization_member:write:',
        '',
        '  curl -X POST -H "Authorization: Bearer <your personal API key>" https://posthog.example.com/api/invites/0b6f1c1e-6f0a-4a55-9d0e-3c5a0c8d2b11/accept/',
        '',
        'Invite id: 0b6f1c1e-6f0a-4a55-9d0e-3c5a0c8d2b11',
        'The invite expires on 2026-11-24T10:00:00.000Z.',
        'If you have no key yet, ask the operator of this service to create one for your address.',
        '',
      ].join('\n'),
    );
  });

  it('leaves out an empty message and greets without a first name', () => {
    const mail = invitationEmail({ ...base, message: '  ', firstName: '', level: 1 });
    expect(mail.text).not.toContain('wrote:');
    expect(mail.text.startsWith('Hi there,\n')).toBe(true);
    expect(mail.text).toContain('as a member.');
    expect(invitationEmail({ ...base, message: null, level: 15 }).text).toContain('as an owner.');
  });

  it('names an inviter without a name by address, and a missing one as "Someone"', () => {
    const noName = { firstName: '', lastName: '', email: 'ops@acme.com' };
    expect(inviterName(noName)).toBe('ops@acme.com');
    expect(invitationEmail({ ...base, inviter: noName }).subject).toBe(
      'ops@acme.com invited you to join Acme',
    );
    expect(invitationEmail({ ...base, inviter: noName }).text).toContain('\nops@acme.com invited you');
    expect(invitationEmail({ ...base, inviter: null }).subject).toBe('Someone invited you to join Acme');
  });

  it('never puts a line break in the subject', () => {
    const mail = invitationEmail({
      ...base,
      organizationName: 'Evil\r\nBcc: victim@example.com',
      inviter: { firstName: 'A\nB', lastName: '', email: 'a@b.c' },
    });
    expect(mail.subject).toBe('A B invited you to join Evil Bcc: victim@example.com');
  });
});
