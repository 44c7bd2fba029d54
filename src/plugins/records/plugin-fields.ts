import { ApiError } from '../../common/errors/api-error.js';
import { throwIfViolated } from '../../common/validation/violation.js';
import {
  CATEGORY_NOUNS,
  CATEGORY_SEGMENTS,
  type Capabilities,
  categoryOf,
  defaultCapabilities,
  type PluginCategory,
} from '../categories/plugin-category.js';
import {
  capabilitiesViolation,
  configSchemaViolation,
  type JsonObject,
  metricsViolation,
  normaliseUrl,
  publicJobsViolation,
  toCapabilities,
} from '../rules/plugin-rules.js';
import type { CreatePluginDto, ReplacePluginDto, UpdatePluginDto } from './dto/plugin-input.dto.js';

/** The fields of a plugin record as a request sends them: their checks and the errors of record changes. */

export const duplicateUrl = () =>
  ApiError.validation('A plugin with this url is already installed in this organization.', 'url', 'unique');

const projects = (n: number | null) => (n === null ? 'projects' : `${n} project${n === 1 ? '' : 's'}`);

/** 400 for making private or deleting a record that projects of other organizations use (`n`, when known). */
export const usedElsewhere = (n: number | null, action: string) =>
  ApiError.validation(
    `This plugin is used by ${projects(n)} of other organizations (plugin configs): it cannot be ${action}.`,
    'is_global',
    'in_use',
  );

/** Validated capabilities that put the record in `category`; the category's default when not sent. */
export function capabilitiesFor(category: PluginCategory, value: unknown): Capabilities {
  if (value === undefined) return defaultCapabilities(category);
  throwIfViolated(capabilitiesViolation(value));
  const capabilities = toCapabilities(value as JsonObject);
  const actual = categoryOf(capabilities);
  if (actual !== category) {
    throw ApiError.validation(
      `These capabilities make this plugin one of the ${CATEGORY_NOUNS[actual].many} ` +
        `(${CATEGORY_SEGMENTS[actual]}), not one of the ${CATEGORY_NOUNS[category].many}.`,
      'capabilities',
    );
  }
  return capabilities;
}

/** The JSON fields sent (`config_schema`, `metrics`, `public_jobs`), each checked. */
export function jsonFields(input: CreatePluginDto | UpdatePluginDto | ReplacePluginDto): {
  configSchema?: unknown;
  metrics?: JsonObject;
  publicJobs?: JsonObject;
} {
  const out: { configSchema?: unknown; metrics?: JsonObject; publicJobs?: JsonObject } = {};
  if (input.config_schema !== undefined) {
    throwIfViolated(configSchemaViolation(input.config_schema));
    out.configSchema = input.config_schema;
  }
  if (input.metrics !== undefined) {
    throwIfViolated(metricsViolation(input.metrics));
    out.metrics = input.metrics as JsonObject;
  }
  if (input.public_jobs !== undefined) {
    throwIfViolated(publicJobsViolation(input.public_jobs));
    out.publicJobs = input.public_jobs as JsonObject;
  }
  return out;
}

/** Whether a url sent back is the record's url (as stored, or as it normalises). */
export function sameUrl(sent: string | null, current: string | null): boolean {
  if (sent === current) return true;
  if (sent === null || current === null) return false;
  try {
    return normaliseUrl(sent.trim()) === current;
  } catch {
    return false;
  }
}
