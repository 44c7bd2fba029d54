import {
  byteSize,
  byteSizeBetween,
  int,
  setting,
  type SettingsTable,
  type SettingValues,
} from '../config/settings.js';

/**
 * The settings of the persons feature, declared by its manifest: parsed with every other setting by
 * src/config/config.ts (one report of every bad variable), documented in docs/configuration.md and .env.example.
 */
export const PERSONS_SETTINGS = {
  PERSON_SET_MAX_KEYS: setting(
    int(1, 1000000),
    1000,
    'Most values one `$set` or `$set_once` may hold (each key of an object and each element of an array, nested included), and so what one request may set on one person. In capture a larger one is dropped (its event is stored, a warning logged; the parser stops building it at once); the API answers 400.',
  ),
  PERSON_SET_MAX_BYTES: setting(
    byteSize,
    64 * 1024,
    'Most bytes (compact JSON) of what one request sets on one person (`$set` and `$set_once`). In capture a `$set` past it is dropped (its event is stored, a warning logged); the API answers 400.',
  ),
  PERSON_PROPERTIES_MAX_BYTES: setting(
    byteSizeBetween(1024, 1024 * 1024),
    512 * 1024,
    "Most bytes (compact JSON) of one person's properties. An update that would pass it is not applied (capture: dropped and logged; the API: 400); a person already past it (stored before the limit, or the limit lowered) is trimmed on its next update, largest properties first, keeping the identifying ones (email, name, initial and campaign properties).",
  ),
  PERSONS_LIST_MAX_BYTES: setting(
    byteSizeBetween(64 * 1024, 256 * 1024 * 1024),
    8 * 1024 * 1024,
    "Most bytes of persons (their properties' JSON and the distinct ids shown) one page of the persons list holds: a page ends early, before `limit`, at the first person past it (always at least one person), and `next` starts at the first person left out.",
  ),
} satisfies SettingsTable;

declare module '../config/config.js' {
  // An interface, so that each feature's settings merge into the values of AppConfig.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface FeatureSettingValues extends SettingValues<typeof PERSONS_SETTINGS> {}
}
