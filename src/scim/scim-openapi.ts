import { applyDecorators, Header } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiDefaultResponse,
  ApiExtension,
  ApiOperation,
  ApiParam,
  ApiProduces,
  ApiResponse,
} from '@nestjs/swagger';
import { SCIM_CONTENT_TYPE } from './scim-protocol.js';

const SCIM_MEDIA = 'application/scim+json';
const object = { type: 'object', additionalProperties: true } as const;

/**
 * A SCIM operation in the OpenAPI document (tag `scim`): its success status, and every other answer as an RFC 7644
 * error in application/scim+json (`x-error-media-type` keeps the document's JSON error bodies off it). Answers
 * are sent as application/scim+json.
 */
export function ScimOperation(options: {
  summary: string;
  description: string;
  status: number;
  body?: boolean;
  noContent?: boolean;
  /** The `{id}` path parameter, when the route has one. */
  id?: { example: string; description: string };
}): MethodDecorator {
  return applyDecorators(
    ApiOperation({ summary: options.summary, description: options.description }),
    ApiParam({
      name: 'domain_id',
      type: String,
      format: 'uuid',
      example: '5b0b3a4e-8d0c-4a52-9f1e-1f6a1e2b3c4d',
      description: 'The domain whose SCIM token is sent.',
    }),
    ...(options.id
      ? [ApiParam({ name: 'id', example: options.id.example, description: options.id.description })]
      : []),
    ApiExtension('x-error-media-type', SCIM_MEDIA),
    ApiProduces(SCIM_MEDIA),
    ...(options.noContent
      ? [ApiResponse({ status: options.status, description: 'Done.' })]
      : [
          ApiResponse({
            status: options.status,
            description: 'A SCIM resource or list.',
            content: { [SCIM_MEDIA]: { schema: object } },
          }),
          Header('Content-Type', SCIM_CONTENT_TYPE),
        ]),
    ApiDefaultResponse({
      description:
        'An RFC 7644 error: `{schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"], status: "<status>", detail, ' +
        'scimType?}`: 401 (missing or wrong token), 400 (`invalidValue`, `invalidFilter`, `invalidSyntax`, ' +
        '`mutability`…), 404, 409 (`uniqueness`), 413, 429.',
      content: { [SCIM_MEDIA]: { schema: object } },
    }),
    ...(options.body ? [ApiConsumes(SCIM_MEDIA), ApiBody({ schema: object, required: true })] : []),
  );
}

/** `{id}` of a user: its uuid. */
export const USER_ID = { example: '0b6f3c2e-1d4a-4c8e-9f7b-2a5d6e8f9a0b', description: "The user's uuid." };
/** `{id}` of a group: its role's uuid. */
export const GROUP_ID = { example: '7d2e4f6a-8b0c-4d1e-9f3a-5b7c9d1e3f5a', description: "The role's uuid." };
