import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../common/errors/api-error.js';
import { webhookChanges } from './batch-export-input-rules.js';
import { signWebhook } from './runs/run-notifications.js';

const URL_A = 'https://hooks.example.com/a';
const URL_B = 'https://hooks.example.com/b';
const SECRET = 'a-secret-of-sixteen+';

describe('signWebhook', () => {
  it('is v1= and the HMAC-SHA256 of "<timestamp>.<body>" (as `openssl dgst -sha256 -hmac` computes it)', () => {
    expect(signWebhook(SECRET, 1700000000, '{"id":"x"}')).toBe(
      'v1=873385d02cc5f759de15e0893e7e9c66e0548f16b9bc142b0be80ef617b2f57e',
    );
    expect(signWebhook(SECRET, 1700000001, '{"id":"x"}')).not.toBe(
      signWebhook(SECRET, 1700000000, '{"id":"x"}'),
    );
  });
});

describe('webhookChanges', () => {
  const refusal = (f: () => unknown) => {
    try {
      f();
    } catch (err) {
      return [(err as ApiError).getStatus(), (err as ApiError).attr];
    }
    return null;
  };

  it('sets a URL with its secret, rotates the secret alone, and removes both with a null URL', () => {
    expect(webhookChanges({}, null)).toEqual({});
    expect(
      webhookChanges({ notification_webhook_url: URL_A, notification_webhook_secret: SECRET }, null),
    ).toEqual({
      notificationWebhookUrl: URL_A,
      notificationWebhookSecret: SECRET,
    });
    expect(webhookChanges({ notification_webhook_secret: SECRET }, URL_A)).toEqual({
      notificationWebhookSecret: SECRET,
    });
    expect(webhookChanges({ notification_webhook_url: URL_A }, URL_A)).toEqual({});
    expect(webhookChanges({ notification_webhook_url: null }, URL_A)).toEqual({
      notificationWebhookUrl: null,
      notificationWebhookSecret: null,
    });
    expect(webhookChanges({ notification_webhook_url: null }, null)).toEqual({});
  });

  it('refuses a new URL without its secret, and a secret without a URL (400 on the secret)', () => {
    expect(refusal(() => webhookChanges({ notification_webhook_url: URL_B }, URL_A))).toEqual([
      400,
      'notification_webhook_secret',
    ]);
    expect(refusal(() => webhookChanges({ notification_webhook_url: URL_A }, null))).toEqual([
      400,
      'notification_webhook_secret',
    ]);
    expect(refusal(() => webhookChanges({ notification_webhook_secret: SECRET }, null))).toEqual([
      400,
      'notification_webhook_secret',
    ]);
    expect(
      refusal(() =>
        webhookChanges({ notification_webhook_url: null, notification_webhook_secret: SECRET }, URL_A),
      ),
    ).toEqual([400, 'notification_webhook_secret']);
  });
});
