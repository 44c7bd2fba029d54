import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsDefined,
  IsIn,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
  MinLength,
} from 'class-validator';
import { Trim } from '../../common/validation/decorators.js';
import { ReadOnlyFields } from '../../common/validation/read-only-fields.decorator.js';
import {
  PROPERTY_KEY_MAX_LENGTH,
  PROPERTY_VALUE_MAX_LENGTH,
  RULE_KINDS,
  RULE_PROPERTY_OPERATORS,
  type RuleKind,
  type RulePropertyOperator,
  URL_PATTERN_MAX_LENGTH,
} from '../recording-access-rule.entity.js';

/** Most roles one rule names. */
export const RULE_MAX_ROLES = 50;

/** Fields of a rule that clients read but never write: ignored when sent. */
const READ_ONLY = ['id', 'created_by', 'created_at', 'updated_at'];

// Constraints are listed in application order: the type check first, so that its message is the one reported.

/** A non-blank string of at most `max` characters, or null (for the fields of the other kind). */
const Text = (max: number) =>
  applyDecorators(
    IsOptional(),
    IsString({ message: 'Must be a string.' }),
    MinLength(1, { message: 'This field may not be blank.' }),
    MaxLength(max, { message: `Ensure this field has no more than ${max} characters.` }),
  );

/** A rule as POST takes it; which fields a kind needs is checked by the service (400 naming the field). */
@ReadOnlyFields(...READ_ONLY)
export class CreateRecordingAccessRuleDto {
  @ApiProperty({
    enum: RULE_KINDS,
    example: 'start_url',
    description:
      '`start_url`: the rule matches recordings whose start URL matches `url_pattern`; `person_property`: those ' +
      "whose person's property `property_key` compares with `property_value` by `property_operator`.",
  })
  @IsDefined({ message: 'This field is required.' })
  @IsIn(RULE_KINDS, { message: 'Must be "start_url" or "person_property".' })
  kind: RuleKind;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    minLength: 1,
    maxLength: URL_PATTERN_MAX_LENGTH,
    example: 'https://example.com/billing/*',
    description:
      '`start_url` rules (required there, null otherwise): a glob matched against the whole start URL, ignoring ' +
      'case; `*` stands for any characters (at most 10 of them), every other character for itself. ' +
      '`*://*/admin*` matches the admin pages of any host; a recording without a start URL never matches.',
  })
  @Trim()
  @Text(URL_PATTERN_MAX_LENGTH)
  url_pattern?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    minLength: 1,
    maxLength: PROPERTY_KEY_MAX_LENGTH,
    example: null,
    description:
      '`person_property` rules (required there, null otherwise): the person property, e.g. `email`.',
  })
  @Text(PROPERTY_KEY_MAX_LENGTH)
  property_key?: string | null;

  @ApiPropertyOptional({
    enum: RULE_PROPERTY_OPERATORS,
    nullable: true,
    example: null,
    description:
      '`person_property` rules (default `exact`, null otherwise): `exact` (the property as text equals the ' +
      'value), `is_not` (it does not: also a recording without a person or without the property), `icontains` ' +
      '(it contains the value, ignoring case).',
  })
  @IsOptional()
  @IsIn(RULE_PROPERTY_OPERATORS, { message: 'Must be "exact", "is_not" or "icontains".' })
  property_operator?: RulePropertyOperator | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    minLength: 1,
    maxLength: PROPERTY_VALUE_MAX_LENGTH,
    example: null,
    description:
      '`person_property` rules (required there, null otherwise): the value compared with; a number or a boolean ' +
      'is taken as its text (`42`, `true`), as the stored property reads.',
  })
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'number' || typeof value === 'boolean' ? String(value) : value,
  )
  @Text(PROPERTY_VALUE_MAX_LENGTH)
  property_value?: string | null;

  @ApiProperty({
    type: [String],
    format: 'uuid',
    maxItems: RULE_MAX_ROLES,
    example: [],
    description:
      'Roles of the organization whose members may watch the recordings the rule matches (besides its admins ' +
      'and owners, who see everything). Empty: only admins and owners may. A role of another organization is 400.',
  })
  @IsDefined({ message: 'This field is required.' })
  @IsArray({ message: 'Must be a list of role ids.' })
  @ArrayMaxSize(RULE_MAX_ROLES, { message: `At most ${RULE_MAX_ROLES} roles.` })
  @IsUUID('all', { each: true, message: 'Each role id must be a valid UUID.' })
  role_ids: string[];
}

/**
 * The body of PATCH: any field of a rule. The rule after the change must be complete for its kind; changing
 * `kind` clears the fields of the former kind that the body does not set.
 */
@ReadOnlyFields(...READ_ONLY)
export class UpdateRecordingAccessRuleDto extends PartialType(CreateRecordingAccessRuleDto) {}
