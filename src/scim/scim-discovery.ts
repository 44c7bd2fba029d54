import { SCHEMA, SCIM_MAX_COUNT } from './scim-protocol.js';

/** RFC 7643 §5: what this service provider supports. */
export function serviceProviderConfig(baseUrl: string): Record<string, unknown> {
  return {
    schemas: [SCHEMA.SERVICE_PROVIDER_CONFIG],
    documentationUri: 'https://datatracker.ietf.org/doc/html/rfc7644',
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: SCIM_MAX_COUNT },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'OAuth Bearer Token',
        description: "The domain's SCIM bearer token, sent as Authorization: Bearer <token>.",
        specUri: 'https://datatracker.ietf.org/doc/html/rfc6750',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${baseUrl}/ServiceProviderConfig` },
  };
}

/** RFC 7643 §6: the resource types, by id. */
export function resourceTypes(baseUrl: string): Record<string, Record<string, unknown>> {
  const type = (id: 'User' | 'Group', endpoint: string, schema: string) => ({
    schemas: [SCHEMA.RESOURCE_TYPE],
    id,
    name: id,
    endpoint,
    description: id === 'User' ? 'A member of the organization' : 'A role of the organization',
    schema,
    ...(id === 'User' ? { schemaExtensions: [] } : {}),
    meta: { resourceType: 'ResourceType', location: `${baseUrl}/ResourceTypes/${id}` },
  });
  return {
    User: type('User', '/Users', SCHEMA.USER),
    Group: type('Group', '/Groups', SCHEMA.GROUP),
  };
}

const attribute = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  name,
  type: 'string',
  multiValued: false,
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  ...extra,
});

/** RFC 7643 §7: the schemas of the resources, by id (the attributes this service keeps). */
export function schemas(baseUrl: string): Record<string, Record<string, unknown>> {
  const schema = (id: string, name: string, attributes: Record<string, unknown>[]) => ({
    schemas: [SCHEMA.SCHEMA],
    id,
    name,
    description: name,
    attributes,
    meta: { resourceType: 'Schema', location: `${baseUrl}/Schemas/${id}` },
  });
  return {
    [SCHEMA.USER]: schema(SCHEMA.USER, 'User', [
      attribute('userName', { required: true, uniqueness: 'server', mutability: 'immutable' }),
      attribute('externalId', { caseExact: true }),
      attribute('displayName'),
      attribute('name', {
        type: 'complex',
        subAttributes: [
          attribute('givenName'),
          attribute('familyName'),
          attribute('formatted', { mutability: 'readOnly' }),
        ],
      }),
      attribute('emails', {
        type: 'complex',
        multiValued: true,
        mutability: 'readOnly',
        subAttributes: [attribute('value'), attribute('type'), attribute('primary', { type: 'boolean' })],
      }),
      attribute('active', { type: 'boolean' }),
    ]),
    [SCHEMA.GROUP]: schema(SCHEMA.GROUP, 'Group', [
      attribute('externalId', { caseExact: true }),
      attribute('displayName', { required: true, uniqueness: 'server' }),
      attribute('members', {
        type: 'complex',
        multiValued: true,
        subAttributes: [
          attribute('value', { mutability: 'immutable' }),
          attribute('display', { mutability: 'readOnly' }),
          attribute('$ref', { type: 'reference', mutability: 'immutable' }),
        ],
      }),
    ]),
  };
}
