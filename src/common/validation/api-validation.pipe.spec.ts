import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { plainToInstance, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsDefined,
  IsEmail,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  MaxLength,
  MinLength,
  validate,
  ValidateNested,
  type ValidationError,
} from 'class-validator';
import { ApiError } from '../errors/api-error.js';
import { ApiValidationPipe, validationErrorToApiError } from './api-validation.pipe.js';
import { ReadOnlyFields } from './read-only-fields.decorator.js';

class InviteDto {
  @IsDefined()
  @IsEmail({}, { message: 'Enter a valid e-mail address.' })
  target_email: string;

  @IsOptional()
  @IsString()
  @MaxLength(30)
  first_name?: string;
}

@ReadOnlyFields('id', 'created_at')
class CreateThingDto {
  @IsDefined()
  @IsString()
  @MaxLength(10)
  name: string;

  @IsOptional()
  @IsString()
  @MinLength(3)
  code?: string;

  @IsOptional()
  @IsInt({ message: 'level must be an integer' })
  level?: number;
}

/** A subclass inherits the read-only fields of its parent. */
class UpdateThingDto extends CreateThingDto {}

@ReadOnlyFields('kind')
class ConfigDto {
  @IsDefined()
  @IsString()
  bucket_name: string;
}

class DestinationDto {
  @IsDefined()
  @IsString()
  type: string;

  @IsDefined()
  @ValidateNested()
  @Type(() => ConfigDto)
  config: ConfigDto;
}

class ExportDto {
  @IsDefined()
  @ValidateNested()
  @Type(() => DestinationDto)
  destination: DestinationDto;
}

class BulkInviteDto {
  @IsDefined()
  @ArrayMaxSize(20)
  @ValidateNested({ each: true })
  @Type(() => InviteDto)
  invites: InviteDto[];
}

/** Validates `plain` as the service's pipe does (whitelist + forbidNonWhitelisted) and returns the errors. */
async function errorsOf<T extends object>(cls: new () => T, plain: unknown): Promise<ValidationError[]> {
  const instance = plainToInstance(cls, plain) as T;
  const errors = await validate(instance, { whitelist: true, forbidNonWhitelisted: true });
  expect(errors.length).toBeGreaterThan(0);
  return errors;
}

async function apiErrorOf<T extends object>(cls: new () => T, plain: unknown): Promise<ApiError> {
  const error = validationErrorToApiError(await errorsOf(cls, plain));
  expect(error).toBeInstanceOf(ApiError);
  expect(error.getStatus()).toBe(400);
  expect(error.body.type).toBe('validation_error');
  return error;
}

describe('validationErrorToApiError', () => {
  it('answers a missing field with required', async () => {
    const error = await apiErrorOf(CreateThingDto, {});
    expect(error.body).toEqual({
      type: 'validation_error',
      code: 'required',
      detail: 'This field is required.',
      attr: 'name',
    });
  });

  it('answers an over-long string with max_length and the validator sentence', async () => {
    const error = await apiErrorOf(CreateThingDto, { name: 'x'.repeat(11) });
    expect(error.body).toEqual({
      type: 'validation_error',
      code: 'max_length',
      detail: 'Name must be shorter than or equal to 10 characters.',
      attr: 'name',
    });
  });

  it('answers a too-short string with min_length', async () => {
    const error = await apiErrorOf(CreateThingDto, { name: 'ok', code: 'ab' });
    expect(error.code).toBe('min_length');
    expect(error.attr).toBe('code');
    expect(error.detail).toBe('Code must be longer than or equal to 3 characters.');
  });

  it('answers another failed constraint with invalid_input, capitalised and ending in a period', async () => {
    const error = await apiErrorOf(CreateThingDto, { name: 'ok', level: 'high' });
    expect(error.body).toEqual({
      type: 'validation_error',
      code: 'invalid_input',
      detail: 'Level must be an integer.',
      attr: 'level',
    });
  });

  it('keeps a custom message that already ends with punctuation', async () => {
    const error = await apiErrorOf(InviteDto, { target_email: 'nope' });
    expect(error.body).toEqual({
      type: 'validation_error',
      code: 'invalid_input',
      detail: 'Enter a valid e-mail address.',
      attr: 'target_email',
    });
  });

  it('answers a null required field with invalid_input, not required', async () => {
    const error = await apiErrorOf(CreateThingDto, { name: null });
    expect(error.attr).toBe('name');
    expect(error.code).toBe('invalid_input');
  });

  it('answers an unknown field with unknown_field naming it', async () => {
    const error = await apiErrorOf(CreateThingDto, { name: 'ok', colour: 'red' });
    expect(error.body).toEqual({
      type: 'validation_error',
      code: 'unknown_field',
      detail: "Unknown field 'colour'.",
      attr: 'colour',
    });
  });

  it('answers a read-only field with read_only_field naming it', async () => {
    const error = await apiErrorOf(CreateThingDto, { name: 'ok', created_at: '2026-01-01T00:00:00.000Z' });
    expect(error.body).toEqual({
      type: 'validation_error',
      code: 'read_only_field',
      detail: "Field 'created_at' is read-only.",
      attr: 'created_at',
    });
  });

  it('inherits read-only fields from a decorated parent class', async () => {
    const error = await apiErrorOf(UpdateThingDto, { name: 'ok', id: 7 });
    expect(error.code).toBe('read_only_field');
    expect(error.attr).toBe('id');
  });

  it('treats read-only names of another class as unknown', async () => {
    const error = await apiErrorOf(InviteDto, { target_email: 'a@example.com', id: 1 });
    expect(error.code).toBe('unknown_field');
    expect(error.attr).toBe('id');
  });

  it('joins a nested path with __', async () => {
    const error = await apiErrorOf(ExportDto, { destination: { type: 'S3', config: {} } });
    expect(error.body).toEqual({
      type: 'validation_error',
      code: 'required',
      detail: 'This field is required.',
      attr: 'destination__config__bucket_name',
    });
  });

  it('names a nested unknown field by its full path', async () => {
    const error = await apiErrorOf(ExportDto, {
      destination: { type: 'S3', config: { bucket_name: 'b', region: 'eu' } },
    });
    expect(error.body).toEqual({
      type: 'validation_error',
      code: 'unknown_field',
      detail: "Unknown field 'destination__config__region'.",
      attr: 'destination__config__region',
    });
  });

  it('uses the read-only fields of the nested class for a nested field', async () => {
    const error = await apiErrorOf(ExportDto, {
      destination: { type: 'S3', config: { bucket_name: 'b', kind: 'x' } },
    });
    expect(error.code).toBe('read_only_field');
    expect(error.attr).toBe('destination__config__kind');
    expect(error.detail).toBe("Field 'destination__config__kind' is read-only.");
  });

  it('answers a missing nested object as required at its own path', async () => {
    const error = await apiErrorOf(ExportDto, {});
    expect(error.code).toBe('required');
    expect(error.attr).toBe('destination');
  });

  describe('arrays of nested objects', () => {
    const invites = (bad: Record<string, unknown>) => [
      { target_email: 'a@example.com' },
      { target_email: 'b@example.com' },
      { target_email: 'c@example.com', first_name: 'C' },
      bad,
      { target_email: 'e@example.com' },
    ];

    it('names the index of the failing item in the path', async () => {
      const error = await apiErrorOf(BulkInviteDto, { invites: invites({ first_name: 'D' }) });
      expect(error.body).toEqual({
        type: 'validation_error',
        code: 'required',
        detail: 'This field is required.',
        attr: 'invites__3__target_email',
      });
    });

    it('gives `3__target_email` for the errors of a top-level array (the children of its error)', async () => {
      const [arrayError] = await errorsOf(BulkInviteDto, { invites: invites({ target_email: 'nope' }) });
      expect(arrayError.property).toBe('invites');
      const error = validationErrorToApiError(arrayError.children ?? []);
      expect(error.body).toEqual({
        type: 'validation_error',
        code: 'invalid_input',
        detail: 'Enter a valid e-mail address.',
        attr: '3__target_email',
      });
    });

    it('names an unknown field of an item with its index', async () => {
      const error = await apiErrorOf(BulkInviteDto, {
        invites: invites({ target_email: 'd@example.com', nickname: 'd' }),
      });
      expect(error.body).toEqual({
        type: 'validation_error',
        code: 'unknown_field',
        detail: "Unknown field 'invites__3__nickname'.",
        attr: 'invites__3__nickname',
      });
    });

    it('applies item constraints with the index (max_length)', async () => {
      const error = await apiErrorOf(BulkInviteDto, {
        invites: invites({ target_email: 'd@example.com', first_name: 'x'.repeat(31) }),
      });
      expect(error.code).toBe('max_length');
      expect(error.attr).toBe('invites__3__first_name');
    });

    it('reports a constraint on the array itself at the array path', async () => {
      const many = Array.from({ length: 21 }, (_, i) => ({ target_email: `u${i}@example.com` }));
      const error = await apiErrorOf(BulkInviteDto, { invites: many });
      expect(error.code).toBe('invalid_input');
      expect(error.attr).toBe('invites');
      expect(error.detail).toBe('Invites must contain no more than 20 elements.');
    });
  });

  it('reports the first failing field when several fail', async () => {
    const errors = await errorsOf(CreateThingDto, { name: 'x'.repeat(11), level: 'x' });
    expect(errors.map((e) => e.property)).toEqual(['name', 'level']);
    expect(validationErrorToApiError(errors).attr).toBe('name');
  });
});

describe('ApiValidationPipe', () => {
  const pipe = new ApiValidationPipe();
  const body = { type: 'body', metatype: CreateThingDto, data: '' } as const;
  const query = { type: 'query', metatype: CreateThingDto, data: '' } as const;

  /** The ApiError of `run`, whether it throws synchronously or rejects. */
  const rejection = async (run: () => unknown): Promise<ApiError> => {
    try {
      await run();
    } catch (err) {
      expect(err).toBeInstanceOf(ApiError);
      return err as ApiError;
    }
    throw new Error('expected an ApiError');
  };

  it('returns a DTO instance for a valid body', async () => {
    const value = await pipe.transform({ name: 'ok', level: 3 }, body);
    expect(value).toBeInstanceOf(CreateThingDto);
    expect(value).toEqual({ name: 'ok', level: 3 });
  });

  it.each([[[{ name: 'ok' }]], ['text'], [42]])(
    'rejects the body %j, which is not an object',
    async (value) => {
      const error = await rejection(() => pipe.transform(value, body));
      expect(error.body).toEqual({
        type: 'validation_error',
        code: 'invalid_input',
        detail: 'Expected a JSON object in the request body.',
        attr: null,
      });
    },
  );

  it('treats a missing body as an empty object', async () => {
    const error = await rejection(() => pipe.transform(undefined, body));
    expect(error.code).toBe('required');
    expect(error.attr).toBe('name');
  });

  it('rejects an unknown body field', async () => {
    const error = await rejection(() => pipe.transform({ name: 'ok', x: 1 }, body));
    expect(error.code).toBe('unknown_field');
    expect(error.attr).toBe('x');
  });

  it('drops read-only body fields, whatever their value, instead of rejecting them', async () => {
    const value = await pipe.transform({ name: 'ok', id: 'not even the right type', created_at: 7 }, body);
    expect(value).toBeInstanceOf(CreateThingDto);
    expect(value).toEqual({ name: 'ok' });
  });

  it('still validates the writable fields sent with read-only ones', async () => {
    const error = await rejection(() => pipe.transform({ name: 'x'.repeat(11), id: 1 }, body));
    expect(error.code).toBe('max_length');
    expect(error.attr).toBe('name');
  });

  it('drops the read-only fields of nested DTOs, by the nested class', async () => {
    const nested = { type: 'body', metatype: ExportDto, data: '' } as const;
    const value = await pipe.transform(
      { destination: { type: 'S3', config: { bucket_name: 'b', kind: 'x' } } },
      nested,
    );
    expect(value).toEqual({ destination: { type: 'S3', config: { bucket_name: 'b' } } });
    // `kind` is read-only in the config only: elsewhere it is unknown.
    const error = await rejection(() =>
      pipe.transform({ destination: { type: 'S3', kind: 'x', config: { bucket_name: 'b' } } }, nested),
    );
    expect(error.code).toBe('unknown_field');
    expect(error.attr).toBe('destination__kind');
  });

  it('leaves free-form objects alone: a key named like a read-only field is data there', async () => {
    class WithFreeForm {
      @IsDefined()
      @IsObject()
      settings: Record<string, unknown>;
    }
    ReadOnlyFields('id')(WithFreeForm);
    const value = await pipe.transform(
      { settings: { id: 3, nested: { id: 4 } }, id: 5 },
      { type: 'body', metatype: WithFreeForm, data: '' },
    );
    expect(value).toEqual({ settings: { id: 3, nested: { id: 4 } } });
  });

  it('drops unknown query parameters instead of rejecting them', async () => {
    const value = await pipe.transform({ name: 'ok', utm_source: 'x' }, query);
    expect(value).toEqual({ name: 'ok' });
  });
});
