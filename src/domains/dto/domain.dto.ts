import { ApiProperty } from '@nestjs/swagger';
import { hasSaml, SSO_ENFORCEMENT_VALUES } from '../domain-rules.js';
import type { DomainEntity } from '../domain.entity.js';

/** A Domain (docs/interface.md §2.5). */
export class DomainDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'acme.com', description: 'Lower-case; unique across organizations; immutable.' })
  domain: string;

  @ApiProperty({ description: 'Whether `verified_at` is set.' })
  is_verified: boolean;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  verified_at: string | null;

  @ApiProperty({
    example: 'aY3k9Q0l2Jm8ZfX1vB7cT4nR6sW5eH0uD2gK8pL3oI1',
    description: 'Publish it as a TXT record of `_posthog-challenge.<domain>`, then call verify.',
  })
  verification_challenge: string;

  @ApiProperty({ description: 'Create users signing in with an e-mail address of this domain.' })
  jit_provisioning_enabled: boolean;

  @ApiProperty({ enum: SSO_ENFORCEMENT_VALUES, example: '', description: '"" when not enforced.' })
  sso_enforcement: string;

  @ApiProperty({ description: 'Whether saml_entity_id, saml_acs_url and saml_x509_cert are all set.' })
  has_saml: boolean;

  @ApiProperty({ type: String, nullable: true, example: null, description: 'null when unset.' })
  saml_entity_id: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description: 'An https URL, or null when unset.',
  })
  saml_acs_url: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description: 'A PEM X.509 certificate, or null when unset.',
  })
  saml_x509_cert: string | null;

  @ApiProperty({ example: false, description: 'Whether SCIM provisioning is on (a token exists).' })
  has_scim: boolean;

  @ApiProperty({
    example: false,
    description: 'Whether SCIM provisioning is on at `scim_base_url` (a verified domain only).',
  })
  scim_enabled: boolean;

  @ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description: 'The SCIM 2.0 base URL (`…/scim/v2/<id>`) while SCIM is on, else null.',
  })
  scim_base_url: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description:
      'The SCIM bearer token, only in the answer that turned SCIM on (`scim_enabled: true`); null otherwise (it is stored hashed).',
  })
  scim_bearer_token: string | null;
}

export function toDomainDto(entity: DomainEntity): DomainDto {
  return {
    id: entity.id,
    domain: entity.domain,
    is_verified: entity.verifiedAt !== null,
    verified_at: entity.verifiedAt ? entity.verifiedAt.toISOString() : null,
    verification_challenge: entity.verificationChallenge,
    jit_provisioning_enabled: entity.jitProvisioningEnabled,
    sso_enforcement: entity.ssoEnforcement,
    has_saml: hasSaml(entity),
    saml_entity_id: entity.samlEntityId || null,
    saml_acs_url: entity.samlAcsUrl || null,
    saml_x509_cert: entity.samlX509Cert || null,
    has_scim: entity.scimEnabled,
    scim_enabled: entity.scimEnabled,
    scim_base_url: null,
    scim_bearer_token: null,
  };
}
