import { ApiError } from '../errors/api-error.js';

/**
 * PostHog's property filters (`[{"key": "email", "value": "a@b.c", "operator": "exact", "type": "person"}]`):
 * parsed from a query parameter's JSON and turned into SQL conditions on a jsonb column. Used by the recordings
 * list (event and person filters) and the persons list.
 */

export type PropertyOperator =
  'exact' | 'is_not' | 'icontains' | 'not_icontains' | 'is_set' | 'is_not_set' | 'gt' | 'lt';
export const PROPERTY_OPERATORS: readonly PropertyOperator[] = [
  'exact',
  'is_not',
  'icontains',
  'not_icontains',
  'is_set',
  'is_not_set',
  'gt',
  'lt',
];

export interface PropertyFilter {
  key: string;
  operator: PropertyOperator;
  /** Text values (any of them for exact / is_not); empty for is_set / is_not_set. */
  values: string[];
}

/** Most property filters of one list of them. */
export const MAX_PROPERTY_FILTERS = 10;
const MAX_KEY_LENGTH = 200;
const MAX_VALUES = 20;
const MAX_VALUE_LENGTH = MAX_KEY_LENGTH * 5;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const scalarText = (v: unknown): string | null =>
  typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : null;

/**
 * The property filters of `entries` (parsed JSON) of type `type` (an entry without `type` is of it); anything
 * else is 400 naming the parameter `name`: not an object, another type, no key, an operator not in
 * PROPERTY_OPERATORS, values that are not 1 to 20 scalars, more than MAX_PROPERTY_FILTERS entries.
 */
export function parsePropertyFilterList(
  entries: unknown[],
  name: string,
  type: 'event' | 'person',
): PropertyFilter[] {
  if (entries.length > MAX_PROPERTY_FILTERS) {
    throw ApiError.validation(
      `'${name}' property filters may hold at most ${MAX_PROPERTY_FILTERS} entries.`,
      name,
    );
  }
  return entries.map((entry) => {
    if (!isObject(entry))
      throw ApiError.validation(`Each property filter of '${name}' must be an object.`, name);
    if (entry.type !== undefined && entry.type !== type) {
      throw ApiError.validation(`'${name}' property filters must be of type '${type}'.`, name);
    }
    if (typeof entry.key !== 'string' || entry.key === '' || entry.key.length > MAX_KEY_LENGTH) {
      throw ApiError.validation(
        `'${name}' property filters need a 'key' of 1 to ${MAX_KEY_LENGTH} characters.`,
        name,
      );
    }
    const operator = entry.operator ?? 'exact';
    if (!PROPERTY_OPERATORS.includes(operator as PropertyOperator)) {
      throw ApiError.validation(
        `'${name}' property operator ${JSON.stringify(operator)} is not supported; use one of ${PROPERTY_OPERATORS.join(', ')}.`,
        name,
      );
    }
    const op = operator as PropertyOperator;
    if (op === 'is_set' || op === 'is_not_set') return { key: entry.key, operator: op, values: [] };
    const raw = Array.isArray(entry.value) ? entry.value : [entry.value];
    const values = raw.map(scalarText);
    if (
      values.length === 0 ||
      values.length > MAX_VALUES ||
      values.some((v) => v === null || v.length > MAX_VALUE_LENGTH)
    ) {
      throw ApiError.validation(
        `'${name}' property values must be 1 to ${MAX_VALUES} strings, numbers or booleans.`,
        name,
      );
    }
    if ((op === 'gt' || op === 'lt') && (values.length !== 1 || !Number.isFinite(Number(values[0])))) {
      throw ApiError.validation(`'${name}' property operator '${op}' needs one number.`, name);
    }
    return { key: entry.key, operator: op, values: values as string[] };
  });
}

/** A placeholder for a parameter value, `$n`. */
export type Bind = (value: unknown) => string;

/** The SQL of one property filter on a jsonb column; values are bound, the key too. */
export function propertyFilterSql(column: string, filter: PropertyFilter, bind: Bind): string {
  const key = bind(filter.key);
  const text = `(${column} ->> ${key}::text)`;
  switch (filter.operator) {
    case 'is_set':
      return `(${column} ? ${key}::text)`;
    case 'is_not_set':
      return `NOT (${column} ? ${key}::text)`;
    case 'exact':
      return `${text} = ANY(${bind(filter.values)}::text[])`;
    case 'is_not':
      return `(${text} IS NULL OR NOT ${text} = ANY(${bind(filter.values)}::text[]))`;
    case 'icontains':
      return `strpos(lower(${text}), lower(${bind(filter.values[0])}::text)) > 0`;
    case 'not_icontains':
      return `(${text} IS NULL OR strpos(lower(${text}), lower(${bind(filter.values[0])}::text)) = 0)`;
    case 'gt':
    case 'lt': {
      const num = `(CASE WHEN jsonb_typeof(${column} -> ${key}::text) = 'number' THEN (${column} ->> ${key}::text)::float8 END)`;
      return `${num} ${filter.operator === 'gt' ? '>' : '<'} ${bind(Number(filter.values[0]))}::float8`;
    }
  }
}
