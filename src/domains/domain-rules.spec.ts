import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import {
  challengeRecordName,
  DEFAULT_SETTINGS,
  type DomainSettings,
  hasSaml,
  isDomainName,
  isHttpsUrl,
  isPemCertificate,
  settingsViolation,
} from './domain-rules.js';

const CERT = readFileSync(new URL('../../test/fixtures/saml-idp-cert.pem', import.meta.url), 'utf8').trim();

describe('isDomainName', () => {
  it.each([
    'example.com',
    'a.co',
    'sub.example.co.uk',
    'my-company.io',
    'a-b-c.d-e.example',
    '123.example.com',
    `${'a'.repeat(63)}.com`,
  ])('accepts %j', (domain) => {
    expect(isDomainName(domain)).toBe(true);
  });

  it.each([
    '',
    'localhost',
    'example',
    'Example.com',
    'example.c',
    'example.123',
    '-example.com',
    'example-.com',
    'exa--mple.com',
    'example..com',
    '.example.com',
    'example.com.',
    'exa_mple.com',
    'exa mple.com',
    'http://example.com',
    'user@example.com',
    'example.com/path',
    '*.example.com',
    '192.168.0.1',
    'bücher.example',
    // Punycode (IDN) labels hold a double hyphen, which the pattern of docs/decisions.md §7 does not allow.
    'xn--bcher-kva.example',
    `${'a'.repeat(64)}.com`,
    `${'a.'.repeat(126)}com`,
  ])('rejects %j', (domain) => {
    expect(isDomainName(domain)).toBe(false);
  });

  it('rejects non-strings', () => {
    expect(isDomainName(42)).toBe(false);
    expect(isDomainName(null)).toBe(false);
  });

  it('stays fast on adversarial input', () => {
    // Its own CPU time, not the wall clock: on a shared machine the process also waits for a core.
    const before = process.cpuUsage();
    for (let i = 0; i < 100; i++) isDomainName(`${'a-'.repeat(120)}!`);
    const { user, system } = process.cpuUsage(before);
    expect((user + system) / 1000).toBeLessThan(500);
  });
});

describe('challengeRecordName', () => {
  it('prefixes the domain with _posthog-challenge', () => {
    expect(challengeRecordName('acme.com')).toBe('_posthog-challenge.acme.com');
  });
});

describe('isHttpsUrl', () => {
  it.each([
    'https://idp.example.com/saml/acs',
    'https://idp.example.com:8443/acs?x=1',
    'https://localhost/acs',
  ])('accepts %j', (url) => {
    expect(isHttpsUrl(url)).toBe(true);
  });

  it.each([
    'http://idp.example.com/acs',
    'ftp://idp.example.com',
    'idp.example.com/acs',
    '//idp.example.com/acs',
    'https://',
    'https:///acs',
    'https:\\\\idp.example.com',
    'https://idp.example.com/a cs',
    'not a url',
  ])('rejects %j', (url) => {
    expect(isHttpsUrl(url)).toBe(false);
  });
});

describe('isPemCertificate', () => {
  it('accepts a PEM certificate, LF or CRLF', () => {
    expect(isPemCertificate(CERT)).toBe(true);
    expect(isPemCertificate(CERT.replace(/\n/g, '\r\n'))).toBe(true);
  });

  it.each([
    ['base64 without the PEM armour', CERT.split('\n').slice(1, -1).join('\n')],
    ['a corrupted body', CERT.replace('MII', 'MIJ')],
    ['a truncated body', CERT.split('\n').slice(0, 3).join('\n') + '\n-----END CERTIFICATE-----'],
    ['two certificates', `${CERT}\n${CERT}`],
    ['a private key', CERT.replace(/CERTIFICATE/g, 'PRIVATE KEY')],
    ['text around the certificate', `subject=CN=idp\n${CERT}`],
    ['plain text', 'not a certificate'],
  ])('rejects %s', (_label, value) => {
    expect(isPemCertificate(value)).toBe(false);
  });
});

describe('hasSaml', () => {
  const saml = { samlEntityId: 'idp', samlAcsUrl: 'https://idp.example.com/acs', samlX509Cert: CERT };

  it('is true only when all three SAML fields are set', () => {
    expect(hasSaml(saml)).toBe(true);
    expect(hasSaml({ ...saml, samlEntityId: '' })).toBe(false);
    expect(hasSaml({ ...saml, samlAcsUrl: '' })).toBe(false);
    expect(hasSaml({ ...saml, samlX509Cert: '' })).toBe(false);
  });
});

describe('settingsViolation', () => {
  const saml: DomainSettings = {
    ...DEFAULT_SETTINGS,
    samlEntityId: 'idp',
    samlAcsUrl: 'https://idp.example.com/acs',
    samlX509Cert: CERT,
  };

  it('allows anything but SAML enforcement without SAML on a verified domain', () => {
    expect(
      settingsViolation(DEFAULT_SETTINGS, { ...DEFAULT_SETTINGS, jitProvisioningEnabled: true }, true),
    ).toBeNull();
    expect(
      settingsViolation(DEFAULT_SETTINGS, { ...DEFAULT_SETTINGS, ssoEnforcement: 'github' }, true),
    ).toBeNull();
    expect(settingsViolation(DEFAULT_SETTINGS, { ...saml, ssoEnforcement: 'saml' }, true)).toBeNull();
  });

  it('refuses changes of JIT provisioning and SSO enforcement on an unverified domain', () => {
    expect(
      settingsViolation(DEFAULT_SETTINGS, { ...DEFAULT_SETTINGS, jitProvisioningEnabled: true }, false),
    ).toMatchObject({ code: 'verification_required', attr: 'jit_provisioning_enabled' });
    expect(
      settingsViolation(DEFAULT_SETTINGS, { ...DEFAULT_SETTINGS, ssoEnforcement: 'gitlab' }, false),
    ).toMatchObject({
      code: 'verification_required',
      attr: 'sso_enforcement',
    });
  });

  it('lets an unverified domain keep its values and change its SAML fields', () => {
    expect(settingsViolation(DEFAULT_SETTINGS, DEFAULT_SETTINGS, false)).toBeNull();
    expect(settingsViolation(DEFAULT_SETTINGS, saml, false)).toBeNull();
  });

  it('refuses SAML enforcement without every SAML field, including when a change clears one', () => {
    expect(
      settingsViolation(DEFAULT_SETTINGS, { ...saml, samlX509Cert: '', ssoEnforcement: 'saml' }, true),
    ).toMatchObject({ code: 'invalid_input', attr: 'sso_enforcement' });
    const enforced = { ...saml, ssoEnforcement: 'saml' };
    expect(settingsViolation(enforced, { ...enforced, samlEntityId: '' }, true)).toMatchObject({
      attr: 'sso_enforcement',
    });
  });
});
