import { ValidateBy, type ValidationOptions } from 'class-validator';

/** `YYYY-MM-DDTHH:MM[:SS[.fraction]]` followed by `Z` or a `±HH:MM` offset (a space may replace the `T`). */
const ZONED_TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|z|[+-]\d{2}:?\d{2})$/;

/**
 * Parses an ISO 8601 timestamp that carries a zone (docs/decisions.md §1: inputs must) into a Date; null when it is not
 * one or names an impossible date (2026-02-30, 24:00…), which `Date.parse` would roll over instead.
 */
export function parseZonedTimestamp(value: unknown): Date | null {
  if (typeof value !== 'string') return null;
  const m = ZONED_TIMESTAMP.exec(value.trim());
  if (!m) return null;
  const [year, month, day, hour, minute, second = '0'] = m.slice(1, 7).map((p) => p ?? '0');
  const offset = m[8].toUpperCase();
  if (offset !== 'Z') {
    const [h, mm] = [Number(offset.slice(1, 3)), Number(offset.slice(-2))];
    if (h > 23 || mm > 59) return null;
  }
  const fields = { year: +year, month: +month, day: +day, hour: +hour, minute: +minute, second: +second };
  const local = new Date(
    Date.UTC(fields.year, fields.month - 1, fields.day, fields.hour, fields.minute, fields.second),
  );
  if (
    fields.year < 1 ||
    local.getUTCFullYear() !== fields.year ||
    local.getUTCMonth() !== fields.month - 1 ||
    local.getUTCDate() !== fields.day ||
    local.getUTCHours() !== fields.hour ||
    local.getUTCMinutes() !== fields.minute ||
    local.getUTCSeconds() !== fields.second
  ) {
    return null;
  }
  const millis = Math.floor(Number(`0.${m[7] ?? '0'}`) * 1000);
  const sign = offset === 'Z' ? 0 : offset.startsWith('-') ? -1 : 1;
  const offsetMinutes = sign === 0 ? 0 : sign * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(-2)));
  return new Date(local.getTime() + millis - offsetMinutes * 60_000);
}

/** The value must be an ISO 8601 timestamp with a zone (`2026-11-21T10:00:00Z`, `…+02:00`). */
export const IsZonedTimestamp = (options?: ValidationOptions): PropertyDecorator =>
  ValidateBy(
    {
      name: 'isZonedTimestamp',
      validator: {
        validate: (value: unknown) => parseZonedTimestamp(value) !== null,
        defaultMessage: () => 'Enter an ISO 8601 timestamp with a time zone, such as 2026-11-21T10:00:00Z.',
      },
    },
    options,
  );
