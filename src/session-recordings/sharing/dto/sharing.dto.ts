import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsOptional, ValidateBy } from 'class-validator';
import { IsOmittable } from '../../../common/validation/decorators.js';
import { ReadOnlyFields } from '../../../common/validation/read-only-fields.decorator.js';
import type { RecordingSharing } from '../recording-sharing.repository.js';

/** The display options PostHog's sharing `settings` knows, each a boolean. */
export const SHARING_SETTINGS_KEYS = [
  'whitelabel',
  'noHeader',
  'showInspector',
  'legend',
  'detailed',
  'hideExtraDetails',
] as const;
export type SharingSettings = Partial<Record<(typeof SHARING_SETTINGS_KEYS)[number], boolean>>;

const SETTINGS_PROPERTIES: Record<string, { type: 'boolean' }> = Object.fromEntries(
  SHARING_SETTINGS_KEYS.map((k) => [k, { type: 'boolean' as const }]),
);

/** Keeps the known keys of a settings object (others are dropped, as PostHog drops them). */
function knownSettings(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const known: Record<string, unknown> = {};
  for (const key of SHARING_SETTINGS_KEYS) {
    if ((value as Record<string, unknown>)[key] !== undefined)
      known[key] = (value as Record<string, unknown>)[key];
  }
  return known;
}

export class SharePasswordDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ type: String, format: 'date-time' }) created_at: string;
  @ApiProperty({ type: String, nullable: true }) note: string | null;
  @ApiProperty() created_by_email: string;
  @ApiProperty() is_active: boolean;
}

/** The sharing configuration of a recording (docs/interface.md §2.11, with PostHog's other fields). */
export class SharingConfigurationDto {
  @ApiProperty({ type: String, format: 'date-time' })
  created_at: string;

  @ApiProperty({
    description: 'While true, GET /api/shared/{access_token} shows the recording without a key.',
  })
  enabled: boolean;

  @ApiProperty({
    example: '<ACCESS_TOKEN>',
    description: 'Secret, URL-safe (43 characters); stable until refreshed.',
  })
  access_token: string;

  @ApiProperty({
    type: 'object',
    nullable: true,
    properties: SETTINGS_PROPERTIES,
    additionalProperties: false,
    example: { noHeader: true },
    description: "Display options of the shared view (PostHog's keys, each a boolean); null when never set.",
  })
  settings: SharingSettings | null;

  @ApiProperty({ example: false, description: 'Always false: password-protected sharing is not supported.' })
  password_required: boolean;

  @ApiProperty({
    type: [SharePasswordDto],
    example: [],
    description: 'Always empty: password-protected sharing is not supported.',
  })
  share_passwords: SharePasswordDto[];
}

export function toSharingDto(sharing: RecordingSharing): SharingConfigurationDto {
  return {
    created_at: sharing.createdAt.toISOString(),
    enabled: sharing.enabled,
    access_token: sharing.accessToken,
    settings: sharing.settings,
    password_required: false,
    share_passwords: [],
  };
}

@ReadOnlyFields('created_at', 'access_token', 'share_passwords')
export class UpdateSharingDto {
  @ApiPropertyOptional({
    description:
      "Switches sharing on or off. Switching it on needs the organization's allow_publicly_shared_resources (403).",
  })
  @IsOmittable()
  @IsBoolean({ message: 'Must be a boolean.' })
  enabled?: boolean;

  @ApiPropertyOptional({
    type: 'object',
    nullable: true,
    properties: SETTINGS_PROPERTIES,
    additionalProperties: true,
    example: { noHeader: true, whitelabel: false },
    description: `Replaces the display options: an object whose keys ${SHARING_SETTINGS_KEYS.join(', ')} are booleans (other keys are dropped), or null.`,
  })
  @Transform(({ value }: { value: unknown }) => knownSettings(value))
  @IsOptional()
  @ValidateBy({
    name: 'sharingSettings',
    validator: {
      validate: (value: unknown) =>
        value !== null &&
        typeof value === 'object' &&
        !Array.isArray(value) &&
        Object.values(value).every((v) => typeof v === 'boolean'),
      defaultMessage: () => `Invalid settings format: an object whose values are booleans, or null.`,
    },
  })
  settings?: SharingSettings | null;

  @ApiPropertyOptional({
    type: Boolean,
    description: 'Only false is accepted: password-protected sharing is not supported (true is 400).',
  })
  @IsOmittable()
  @IsBoolean({ message: 'Must be a boolean.' })
  password_required?: boolean;
}
