import type { SchemaObject } from '@nestjs/swagger';

/**
 * The OpenAPI schema of a value that may be any JSON (a string, number, boolean, object, list or null), for
 * `@ApiProperty({ ...ANY_JSON })`. Without it Swagger would type an `unknown` property as an object.
 */
export const ANY_JSON: { nullable: true; oneOf: SchemaObject[] } = {
  nullable: true,
  oneOf: [
    { type: 'string' },
    { type: 'number' },
    { type: 'boolean' },
    { type: 'object', additionalProperties: true },
    { type: 'array', items: {} },
  ],
};
