import { ApiProperty } from '@nestjs/swagger';
import { hasSaml, SSO_ENFORCEMENT_VALUES } from '../domain-rules.js';
import type { DomainEntity } from '../domain.entity.js';

/** A Domain (interface §2.5). */
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

  @ApiProperty({ example: '', description: '"" when unset.' })
  saml_entity_id: string;

  @ApiProperty({ example: '', description: 'An https URL, or "" when unset.' })
  saml_acs_url: string;

  @ApiProperty({ example: '', description: 'A PEM X.509 certificate, or "" when unset.' })
  saml_x509_cert: string;
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
    saml_entity_id: entity.samlEntityId,
    saml_acs_url: entity.samlAcsUrl,
    saml_x509_cert: entity.samlX509Cert,
  };
}
