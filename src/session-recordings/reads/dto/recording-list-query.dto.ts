import { Allow } from 'class-validator';

/**
 * The filter parameters of the recordings list, as the query string gives them (a string, or several when
 * repeated, which is 400). `parseRecordingFilters` checks and parses them, naming the parameter in each 400;
 * the handler's `@ApiQuery` declarations document their formats. Other parameters (paging, cache busters) are
 * not part of it.
 */
export class RecordingListQueryDto {
  @Allow() date_from?: unknown;
  @Allow() date_to?: unknown;
  @Allow() distinct_id?: unknown;
  @Allow() person_uuid?: unknown;
  @Allow() having_predicates?: unknown;
  @Allow() console_log_filters?: unknown;
  @Allow() events?: unknown;
  @Allow() exclude_events?: unknown;
  @Allow() properties?: unknown;
  @Allow() session_ids?: unknown;
  @Allow() operand?: unknown;
}

/** The parameter names of RecordingListQueryDto. */
export type RecordingListParameter = keyof RecordingListQueryDto;
