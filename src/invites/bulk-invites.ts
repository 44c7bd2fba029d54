import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { ApiError } from '../common/errors/api-error.js';
import { escapeReservedKeys, restoreReservedKeys } from '../common/input/reserved-keys.js';
import { validationErrorToApiError } from '../common/validation/api-validation.pipe.js';
import { stripReadOnlyFields } from '../common/validation/read-only-fields.decorator.js';
import { CreateInviteDto } from './dto/invite-input.dto.js';
import { BULK_MAX_INVITES } from './invite-rules.js';

/** `attr` of a field of the bulk request's item `index` (`3__target_email`), or of the item itself. */
export function itemAttr(index: number, attr: string | null): string {
  return attr ? `${index}__${attr}` : String(index);
}

/**
 * Validates a bulk invite body: a JSON array of 1 to BULK_MAX_INVITES invite bodies, each validated exactly
 * as the body of a single invite (same DTO, unknown fields refused and read-only ones ignored, same errors),
 * the error's `attr` prefixed with the item's index. Throws the first error; returns the transformed items.
 */
export async function parseBulkInvites(body: unknown): Promise<CreateInviteDto[]> {
  if (!Array.isArray(body)) {
    throw ApiError.validation(
      `Expected a JSON array of 1 to ${BULK_MAX_INVITES} invites in the request body.`,
      null,
      'invalid_input',
    );
  }
  if (body.length < 1 || body.length > BULK_MAX_INVITES) {
    throw ApiError.validation(
      `A bulk request holds 1 to ${BULK_MAX_INVITES} invites; this one has ${body.length}.`,
      null,
      'invalid_input',
    );
  }
  const items: CreateInviteDto[] = [];
  for (const [index, item] of body.entries()) {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      throw ApiError.validation('Expected a JSON object (an invite body).', itemAttr(index, null));
    }
    const dto = plainToInstance(CreateInviteDto, escapeReservedKeys(item as object));
    stripReadOnlyFields(dto);
    const errors = await validate(dto, {
      whitelist: true,
      forbidNonWhitelisted: true,
      validationError: { target: true, value: true },
    });
    if (errors.length) {
      const error = validationErrorToApiError(errors);
      throw ApiError.validation(error.detail, itemAttr(index, error.attr), error.code);
    }
    items.push(restoreReservedKeys(dto));
  }
  return items;
}
