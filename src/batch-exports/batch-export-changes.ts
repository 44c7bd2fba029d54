/** What a PATCH or PUT of a batch export changes, field by field (BatchExportsService.update). */
import { ApiError } from '../common/errors/api-error.js';
import type { BatchExportEntity } from './batch-export.entity.js';
import type { BatchExportFields } from './batch-exports.repository.js';
import {
  assertStartBeforeEnd,
  scheduleFields,
  timestampOf,
  webhookChanges,
} from './batch-export-input-rules.js';
import { type Config, splitSecrets } from './destinations.js';
import type { ReplaceBatchExportDto, UpdateBatchExportDto } from './dto/batch-export-input.dto.js';
import type { StoredIncremental } from './incremental.js';

/** The checks of the service the changes need: incremental settings as saved, and the merged destination config. */
export interface ChangeChecks {
  assertIncremental(model: string, stored: StoredIncremental): void;
  mergedConfig(patch: Config): Config;
}

/**
 * The columns `input` changes on `current` (each field sent, checked against the export as it would be saved),
 * and the `last_paused_at` it sets, if any. Pausing is applied by the caller.
 */
export function fieldChanges(
  input: UpdateBatchExportDto | ReplaceBatchExportDto,
  current: BatchExportEntity,
  deps: ChangeChecks,
): { changes: Partial<BatchExportFields>; lastPausedAt: Date | null | undefined } {
  const changes: Partial<BatchExportFields> = {};
  if (input.name !== undefined) changes.name = input.name;
  if (input.model !== undefined) changes.model = input.model;
  if (input.interval !== undefined) changes.interval = input.interval;
  if ([input.interval, input.timezone, input.offset_day, input.offset_hour].some((v) => v !== undefined)) {
    const next = scheduleFields(input.interval ?? current.interval, input, current);
    if (next.timezone !== current.timezone) changes.timezone = next.timezone;
    if (next.intervalOffset !== current.intervalOffset) changes.intervalOffset = next.intervalOffset;
  }
  if (input.hogql_query !== undefined) changes.hogqlQuery = input.hogql_query;
  if (input.filters !== undefined) changes.filters = input.filters;
  Object.assign(changes, webhookChanges(input, current.notificationWebhookUrl));
  if (input.incremental_mode !== undefined) changes.incrementalMode = input.incremental_mode;
  if (input.primary_key !== undefined) changes.primaryKey = input.primary_key;
  if (input.version_key !== undefined) changes.versionKey = input.version_key;
  if (
    [input.model, input.incremental_mode, input.primary_key, input.version_key].some((v) => v !== undefined)
  ) {
    // The export as saved: a model changed under stored keys is checked against them too.
    deps.assertIncremental(changes.model ?? current.model, {
      mode: changes.incrementalMode ?? current.incrementalMode,
      primaryKey: changes.primaryKey !== undefined ? changes.primaryKey : current.primaryKey,
      versionKey: changes.versionKey !== undefined ? changes.versionKey : current.versionKey,
    });
  }
  if (input.destination) {
    const { type, config, integration_id: integrationId } = input.destination;
    if (integrationId !== undefined) changes.destinationIntegrationId = integrationId;
    if (type !== undefined && type !== current.destinationType) {
      throw ApiError.validation(
        'The destination type cannot be changed; create another batch export instead.',
        'destination__type',
      );
    }
    if (config !== undefined) {
      const merged = deps.mergedConfig(config);
      const { visible, secrets } = splitSecrets(current.destinationType, merged);
      changes.destinationConfig = visible;
      changes.destinationSecrets = secrets;
    }
  }
  const startAt = timestampOf(input.start_at);
  const endAt = timestampOf(input.end_at);
  if (startAt !== undefined) changes.startAt = startAt;
  if (endAt !== undefined) changes.endAt = endAt;
  assertStartBeforeEnd(
    startAt === undefined ? current.startAt : startAt,
    endAt === undefined ? current.endAt : endAt,
  );
  const lastPausedAt = timestampOf(input.last_paused_at);
  if (lastPausedAt !== undefined) changes.lastPausedAt = lastPausedAt;
  return { changes, lastPausedAt };
}
