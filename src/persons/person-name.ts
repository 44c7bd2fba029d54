/**
 * The display name of a person (docs/decisions.md §10): `properties.email`, else `properties.name`, else the person's
 * first distinct id. Only non-empty strings count as an e-mail or a name; a person with none of them and no
 * distinct id is named by the empty string.
 */
export function personName(
  properties: Record<string, unknown> | null,
  distinctIds: readonly string[],
): string {
  for (const key of ['email', 'name']) {
    const value = properties?.[key];
    if (typeof value === 'string' && value.trim() !== '') return value;
  }
  return distinctIds[0] ?? '';
}
