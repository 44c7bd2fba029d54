import { ApiProperty } from '@nestjs/swagger';

/** `GET …/domains/:id/scim/`: the SCIM configuration of a domain, without its token. */
export class ScimConfigDto {
  @ApiProperty({ description: 'Whether SCIM provisioning is on.' })
  scim_enabled: boolean;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'https://posthog.example.com/scim/v2/5b0b3a4e-8d0c-4a52-9f1e-1f6a1e2b3c4d',
    description: 'The base URL to give the identity provider while SCIM is on, else null.',
  })
  scim_base_url: string | null;
}

/** The answer that made a token (enable, regenerate): the token is shown here once, never again. */
export class ScimTokenDto extends ScimConfigDto {
  @ApiProperty({
    example: 'phscim_3n5K0pWq…',
    description: 'The bearer token for the identity provider. Shown once; only its SHA-256 digest is stored.',
  })
  scim_bearer_token: string;
}
