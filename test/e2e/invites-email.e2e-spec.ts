import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import {
  closedTcpPort,
  startSilentTcpServer,
  startSmtpServer,
  type TestSmtpServer,
} from '../support/smtp-server.js';
import { margin } from '../support/shared-machine.js';

const PUBLIC_URL = 'https://posthog.example.com';

/** Invitation e-mails, delivered to a real SMTP server on loopback (the `smtp-server` package). */
describe('invitation e-mails', () => {
  let smtp: TestSmtpServer;
  let t: TestApp;

  const attempted = async (id: string): Promise<boolean> =>
    (
      await t.dataSource.query('SELECT emailing_attempt_made FROM organization_invites WHERE id = $1', [id])
    )[0].emailing_attempt_made;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await createTestApp({
      SMTP_URL: smtp.url,
      SMTP_FROM: 'Acme Invites <invites@acme.test>',
      PUBLIC_URL: `${PUBLIC_URL}/`,
      SMTP_TIMEOUT_MS: '5000',
    });
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  it('sends one e-mail naming the organization and the inviter, with the message and how to accept', async () => {
    smtp.messages.length = 0;
    const now = new Date('2026-11-21T10:00:00.000Z');
    t.clock.set(now);
    const owner = await t.factories.user({ email: 'ada@acme.test' });
    await t.dataSource.query("UPDATE users SET first_name = 'Ada', last_name = 'Lovelace' WHERE id = $1", [
      owner.id,
    ]);
    const org = (
      await t.http.post('/api/organizations').set(owner.auth).send({ name: 'Acme Mail' }).expect(201)
    ).body;

    // The e-mail goes out only after the transaction committed: when the SMTP server receives it, another
    // connection already sees the invite.
    const seenAtDelivery: number[] = [];
    smtp.onMessage(async () => {
      const rows = await t.dataSource.query(
        "SELECT count(*)::int AS n FROM organization_invites WHERE target_email = 'Grace@example.com'",
      );
      seenAtDelivery.push(rows[0].n);
    });
    const res = await t.http
      .post(`/api/organizations/${org.id}/invites`)
      .set(owner.auth)
      .send({
        target_email: 'Grace@EXAMPLE.com',
        first_name: 'Grace',
        level: 8,
        message: 'Join us to look at the recordings.\nSee you there!',
      })
      .expect(201);
    smtp.onMessage(null);
    expect(seenAtDelivery).toEqual([1]);
    expect(res.body.emailing_attempt_made).toBe(true);
    expect(await attempted(res.body.id)).toBe(true);

    expect(smtp.messages).toHaveLength(1);
    const [mail] = smtp.messages;
    expect(mail.rcptTo).toEqual(['Grace@example.com']);
    expect(mail.mailFrom).toBe('invites@acme.test');
    expect(mail.headers.to).toBe('Grace@example.com');
    expect(mail.headers.from).toBe('Acme Invites <invites@acme.test>');
    expect(mail.subject).toBe('Ada Lovelace invited you to join Acme Mail');
    const id = res.body.id;
    expect(mail.text).toContain('Hi Grace,');
    expect(mail.text).toContain(
      'Ada Lovelace (ada@acme.test) invited you to join the organization "Acme Mail" as an admin.',
    );
    expect(mail.text).toContain('> Join us to look at the recordings.\n> See you there!');
    expect(mail.text).toContain(
      `curl -X POST -H "Authorization: Bearer <your personal API key>" ${PUBLIC_URL}/api/invites/${id}/accept/`,
    );
    expect(mail.text).toContain(`Invite id: ${id}`);
    expect(mail.text).toContain('The invite expires on 2026-11-24T10:00:00.000Z.');

    // The link in the e-mail is the real acceptance endpoint.
    const invitee = await t.factories.user({ email: 'grace@example.com' });
    await t.http
      .post(new URL(`${PUBLIC_URL}/api/invites/${id}/accept/`).pathname)
      .set(invitee.auth)
      .expect(200);
  });

  it('sends nothing with send_email false: emailing_attempt_made stays false', async () => {
    smtp.messages.length = 0;
    const owner = await t.factories.user();
    const org = await t.factories.organization(owner);
    const res = await t.http
      .post(`/api/organizations/${org.id}/invites`)
      .set(owner.auth)
      .send({ target_email: 'quiet@example.com', send_email: false })
      .expect(201);
    expect(res.body.emailing_attempt_made).toBe(false);
    expect(await attempted(res.body.id)).toBe(false);
    expect(smtp.messages).toEqual([]);
  });

  it('bulk: one e-mail per invite that asks for one, after the commit', async () => {
    smtp.messages.length = 0;
    const owner = await t.factories.user();
    const org = await t.factories.organization(owner, 'Bulk Mail');
    const res = await t.http
      .post(`/api/organizations/${org.id}/invites/bulk`)
      .set(owner.auth)
      .send([
        { target_email: 'b1@example.com' },
        { target_email: 'b2@example.com', send_email: false },
        { target_email: 'b3@example.com', message: 'Third' },
      ])
      .expect(201);
    expect(res.body.map((i: { emailing_attempt_made: boolean }) => i.emailing_attempt_made)).toEqual([
      true,
      false,
      true,
    ]);
    expect(smtp.messages.map((m) => m.rcptTo[0]).sort()).toEqual(['b1@example.com', 'b3@example.com']);
    for (const mail of smtp.messages) {
      expect(mail.subject).toBe(`${owner.email} invited you to join Bulk Mail`);
      const invite = res.body.find((i: { target_email: string }) => i.target_email === mail.rcptTo[0]);
      expect(mail.text).toContain(`/api/invites/${invite.id}/accept/`);
    }
    expect(smtp.messages.find((m) => m.rcptTo[0] === 'b3@example.com')!.text).toContain('> Third');
  });

  it('a refusing SMTP server is logged, never fails the request, and the invite is kept', async () => {
    smtp.messages.length = 0;
    smtp.rejectAll(true);
    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      const owner = await t.factories.user();
      const org = await t.factories.organization(owner);
      const res = await t.http
        .post(`/api/organizations/${org.id}/invites`)
        .set(owner.auth)
        .send({ target_email: 'bounce@example.com' })
        .expect(201);
      expect(res.body.emailing_attempt_made).toBe(true); // an attempt was made, even though it failed
      const list = await t.http.get(`/api/organizations/${org.id}/invites`).set(owner.auth).expect(200);
      expect(list.body.results).toEqual([res.body]);
      expect(smtp.messages).toEqual([]);
      expect(warn).toHaveBeenCalledWith(
        expect.objectContaining({
          inviteId: res.body.id,
          error: expect.stringContaining('Mailbox unavailable'),
        }),
        'invitation e-mail could not be sent; the invite is kept',
      );
    } finally {
      warn.mockRestore();
      smtp.rejectAll(false);
    }
  });

  it('without SMTP_URL nothing is sent and emailing_attempt_made is false', async () => {
    const plain = await createTestApp();
    try {
      const owner = await plain.factories.user();
      const org = await plain.factories.organization(owner);
      const res = await plain.http
        .post(`/api/organizations/${org.id}/invites`)
        .set(owner.auth)
        .send({ target_email: 'nosmtp@example.com' })
        .expect(201);
      expect(res.body.emailing_attempt_made).toBe(false);
      expect(smtp.messages.find((m) => m.rcptTo.includes('nosmtp@example.com'))).toBeUndefined();
    } finally {
      await plain.close();
    }
  });

  it('SMTP on a closed port: the invite is still created (201) and listed', async () => {
    const dead = await createTestApp({ SMTP_URL: `smtp://127.0.0.1:${await closedTcpPort()}` });
    try {
      const owner = await dead.factories.user();
      const org = await dead.factories.organization(owner);
      const res = await dead.http
        .post(`/api/organizations/${org.id}/invites`)
        .set(owner.auth)
        .send({ target_email: 'refused@example.com' })
        .expect(201);
      expect(res.body.emailing_attempt_made).toBe(true);
      const list = await dead.http.get(`/api/organizations/${org.id}/invites`).set(owner.auth).expect(200);
      expect(list.body.results.map((i: { id: string }) => i.id)).toEqual([res.body.id]);
      const bulk = await dead.http
        .post(`/api/organizations/${org.id}/invites/bulk`)
        .set(owner.auth)
        .send([{ target_email: 'r1@example.com' }, { target_email: 'r2@example.com' }])
        .expect(201);
      expect(bulk.body).toHaveLength(2);
    } finally {
      await dead.close();
    }
  });

  it('a server that never greets costs at most about SMTP_TIMEOUT_MS, then the invite is answered', async () => {
    const silent = await startSilentTcpServer();
    const slow = await createTestApp({ SMTP_URL: `smtp://127.0.0.1:${silent.port}`, SMTP_TIMEOUT_MS: '300' });
    try {
      const owner = await slow.factories.user();
      const org = await slow.factories.organization(owner);
      const started = Date.now();
      const res = await slow.http
        .post(`/api/organizations/${org.id}/invites`)
        .set(owner.auth)
        .send({ target_email: 'stalled@example.com' })
        .expect(201);
      const elapsed = Date.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(250);
      expect(elapsed).toBeLessThan(250 + margin(4750));
      expect(res.body.emailing_attempt_made).toBe(true);
    } finally {
      await slow.close();
      await silent.close();
    }
  });
});
