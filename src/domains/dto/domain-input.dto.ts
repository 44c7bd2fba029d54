import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsDefined, IsIn, IsString, MaxLength, ValidateBy } from 'class-validator';
import { IsOmittable } from '../../common/validation/decorators.js';
import { ReadOnlyFields } from '../../common/validation/read-only-fields.decorator.js';
import {
  DOMAIN_MAX_LENGTH,
  isDomainName,
  isHttpsUrl,
  isPemCertificate,
  SSO_ENFORCEMENT_VALUES,
  type SsoEnforcement,
} from '../domain-rules.js';

/** Fields of a Domain that clients read but never write. */
const READ_ONLY = [
  'id',
  'is_verified',
  'verified_at',
  'verification_challenge',
  'has_saml',
  'has_scim',
  'scim_base_url',
  'scim_bearer_token',
];

/** Trimmed; `null` is taken as "" (unset), as PostHog clients send it for the nullable SAML fields. */
const EmptyIfNull = () =>
  Transform(({ value }: { value: unknown }) =>
    value === null ? '' : typeof value === 'string' ? value.trim() : value,
  );

/** A string of at most `max` characters that is "" or passes `check`. */
const SamlField = (max: number, check: ((value: string) => boolean) | null, message: string) =>
  applyDecorators(
    EmptyIfNull(),
    IsOmittable(),
    IsString({ message: 'Must be a string.' }),
    MaxLength(max, { message: `Ensure this field has no more than ${max} characters.` }),
    ...(check
      ? [
          ValidateBy({
            name: 'samlFormat',
            validator: {
              validate: (value: unknown) => typeof value !== 'string' || value === '' || check(value),
              defaultMessage: () => message,
            },
          }),
        ]
      : []),
  );

/** Trimmed, then checked in this order (upper case is refused, as PostHog's pattern refuses it). */
const DomainName = () =>
  applyDecorators(
    Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value)),
    IsString({ message: 'Must be a string.' }),
    MaxLength(DOMAIN_MAX_LENGTH, {
      message: `Ensure this field has no more than ${DOMAIN_MAX_LENGTH} characters.`,
    }),
    ValidateBy({
      name: 'domainName',
      validator: {
        // Too long is reported by MaxLength alone.
        validate: (value: unknown) =>
          typeof value !== 'string' || value.length > DOMAIN_MAX_LENGTH || isDomainName(value),
        defaultMessage: () => 'Enter a valid domain name, such as example.com.',
      },
    }),
  );

/** The writable settings, shared by create and update. */
abstract class DomainSettingsDto {
  @ApiPropertyOptional({
    type: Boolean,
    default: false,
    description:
      'Create users signing in with an address of this domain. Changeable on a verified domain only.',
  })
  @IsOmittable()
  @IsBoolean({ message: 'Must be a boolean.' })
  jit_provisioning_enabled?: boolean;

  @ApiPropertyOptional({
    enum: SSO_ENFORCEMENT_VALUES,
    default: '',
    description:
      'Sign-in method members of this domain must use ("" for none). Changeable on a verified domain ' +
      'only; "saml" needs has_saml.',
  })
  @IsOmittable()
  @IsIn(SSO_ENFORCEMENT_VALUES, {
    message: `Must be one of ${SSO_ENFORCEMENT_VALUES.map((v) => JSON.stringify(v)).join(', ')}.`,
  })
  sso_enforcement?: SsoEnforcement;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: 512,
    description: 'Entity id of the SAML identity provider. Trimmed; null or "" unsets it.',
  })
  @SamlField(512, null, '')
  saml_entity_id?: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: 512,
    example: 'https://idp.example.com/saml/acs',
    description: 'SAML assertion consumer service URL: an https URL. Trimmed; null or "" unsets it.',
  })
  @SamlField(512, isHttpsUrl, 'Enter a valid https URL.')
  saml_acs_url?: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: 16384,
    description:
      'X.509 certificate of the identity provider, PEM-encoded (-----BEGIN CERTIFICATE----- …). Trimmed; ' +
      'null or "" unsets it.',
  })
  @SamlField(16384, isPemCertificate, 'Enter a PEM-encoded X.509 certificate.')
  saml_x509_cert?: string;

  @ApiPropertyOptional({
    type: Boolean,
    default: false,
    description:
      'Turns SCIM provisioning on (a verified domain only, else 400 `verification_required`; the answer carries the ' +
      'new `scim_bearer_token` once) or off (the token stops working). The `…/scim/` routes do the same.',
  })
  @IsOmittable()
  @IsBoolean({ message: 'Must be a boolean.' })
  scim_enabled?: boolean;
}

@ReadOnlyFields(...READ_ONLY)
export class CreateDomainDto extends DomainSettingsDto {
  @ApiProperty({
    example: 'acme.com',
    maxLength: DOMAIN_MAX_LENGTH,
    description:
      'Trimmed, then it must match ^([a-z0-9]+(-[a-z0-9]+)*\\.)+[a-z]{2,}$ (lower case; labels of at most ' +
      '63 characters). Unique across all organizations; immutable.',
  })
  @IsDefined()
  @DomainName()
  domain: string;
}

/**
 * PATCH body: the settings. `domain` is immutable: it may be sent back as it is (ignored); another value is
 * 400 `read_only_field`.
 */
@ReadOnlyFields(...READ_ONLY)
export class UpdateDomainDto extends DomainSettingsDto {
  @ApiPropertyOptional({
    description:
      'Immutable: accepted only when equal to the current domain (a client sending back what it read).',
  })
  @IsOmittable()
  @IsString({ message: 'Must be a string.' })
  domain?: string;
}

/** PUT body: a full update; `domain` is required (and must be the current one), settings left out keep their value. */
@ReadOnlyFields(...READ_ONLY)
export class ReplaceDomainDto extends DomainSettingsDto {
  @ApiProperty({ example: 'acme.com', description: 'Immutable: must be the current domain.' })
  @IsDefined()
  @IsString({ message: 'Must be a string.' })
  domain: string;
}
