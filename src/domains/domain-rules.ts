import { X509Certificate } from 'node:crypto';
import type { Violation } from '../common/validation/violation.js';

/** Domain syntax (docs/decisions.md §7), applied after lower-casing: dot-separated labels and an alphabetic TLD. */
export const DOMAIN_PATTERN = /^([a-z0-9]+(-[a-z0-9]+)*\.)+[a-z]{2,}$/;
/** Longest domain name DNS allows (RFC 1035), and longest label. */
export const DOMAIN_MAX_LENGTH = 253;
const LABEL_MAX_LENGTH = 63;

/** Allowed values of `sso_enforcement` ("" means none). Stricter than PostHog, which takes any string. */
export const SSO_ENFORCEMENT_VALUES = ['', 'google-oauth2', 'github', 'gitlab', 'saml'] as const;
export type SsoEnforcement = (typeof SSO_ENFORCEMENT_VALUES)[number];

/** Characters of a new verification challenge: 43 URL-safe characters, 32 random bytes. */
export const CHALLENGE_LENGTH = 43;

/** The DNS name whose TXT records prove control of `domain`. */
export function challengeRecordName(domain: string): string {
  return `_posthog-challenge.${domain}`;
}

/**
 * Whether `value` (already lower-cased) is a domain name we accept: the pattern of docs/decisions.md §7, and labels of
 * at most 63 characters (DNS could not resolve a longer one). The total length is checked apart (max_length).
 */
export function isDomainName(value: unknown): boolean {
  if (typeof value !== 'string' || value.length > DOMAIN_MAX_LENGTH) return false;
  return DOMAIN_PATTERN.test(value) && value.split('.').every((label) => label.length <= LABEL_MAX_LENGTH);
}

/** An absolute https URL with a host (the SAML assertion consumer service). */
export function isHttpsUrl(value: string): boolean {
  // The WHATWG parser would read `https:///x` as host `x`: require the authority to be spelled out.
  if (/\s/.test(value) || !/^https:\/\/[^/\\]/i.test(value)) return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && url.hostname !== '';
  } catch {
    return false;
  }
}

const PEM_CERTIFICATE = /^-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE-----$/;

/** Whether `value` is one PEM-encoded X.509 certificate that parses (expiry is not checked). */
export function isPemCertificate(value: string): boolean {
  if (!PEM_CERTIFICATE.test(value)) return false;
  try {
    new X509Certificate(value);
    return true;
  } catch {
    return false;
  }
}

export interface DomainSettings {
  jitProvisioningEnabled: boolean;
  ssoEnforcement: string;
  samlEntityId: string;
  samlAcsUrl: string;
  samlX509Cert: string;
}

/** `has_saml`: every SAML field is set. */
export function hasSaml(s: Pick<DomainSettings, 'samlEntityId' | 'samlAcsUrl' | 'samlX509Cert'>): boolean {
  return s.samlEntityId !== '' && s.samlAcsUrl !== '' && s.samlX509Cert !== '';
}

/** The settings a new domain starts from. */
export const DEFAULT_SETTINGS: DomainSettings = {
  jitProvisioningEnabled: false,
  ssoEnforcement: '',
  samlEntityId: '',
  samlAcsUrl: '',
  samlX509Cert: '',
};

/**
 * The first rule of docs/decisions.md §7 that moving from `current` to `next` breaks, or null: JIT provisioning and SSO
 * enforcement change only on a verified domain (sending the current value is no change), and SAML enforcement
 * needs every SAML field — also when a change clears a SAML field under it.
 */
export function settingsViolation(
  current: DomainSettings,
  next: DomainSettings,
  verified: boolean,
): Violation | null {
  if (!verified && next.jitProvisioningEnabled !== current.jitProvisioningEnabled) {
    return {
      code: 'verification_required',
      attr: 'jit_provisioning_enabled',
      detail: 'Verify the domain before changing just-in-time provisioning.',
    };
  }
  if (!verified && next.ssoEnforcement !== current.ssoEnforcement) {
    return {
      code: 'verification_required',
      attr: 'sso_enforcement',
      detail: 'Verify the domain before changing SSO enforcement.',
    };
  }
  if (next.ssoEnforcement === 'saml' && !hasSaml(next)) {
    return {
      code: 'invalid_input',
      attr: 'sso_enforcement',
      detail: 'SAML enforcement needs saml_entity_id, saml_acs_url and saml_x509_cert to be set.',
    };
  }
  return null;
}
