import { Controller, Get, HttpCode, Post, Req } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiQuery,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { Public } from '../common/auth/auth.decorators.js';
import { ApiError } from '../common/errors/api-error.js';
import { ErrorBodyDto } from '../common/errors/error-body.dto.js';
import { DirectRoute } from '../common/http/direct-route.js';
import { RawBody } from '../common/http/raw-body.decorator.js';
import type { RequestWithBodyStream } from '../common/http/raw-body.middleware.js';
import { deadlineOf } from '../common/http/request-deadline.js';
import { Clock } from '../common/time/clock.js';
import { IngestPipeline } from '../ingest/ingest-pipeline.js';

/** PostHog's analytics capture endpoints (posthog-js, posthog-node and the HTTP API use all of them). */
export const EVENT_CAPTURE_PATHS = ['e', 'i/v0/e', 'batch', 'capture', 'track'];
/** PostHog's capture v1 endpoint, answered with a 404 naming the v0 endpoints. */
export const CAPTURE_V1_PATH = 'i/v1/analytics/events';

export class EventCaptureResponseDto {
  @ApiProperty({ example: 1, description: "PostHog's success answer." })
  status: number;
}

const DESCRIPTION =
  "PostHog's analytics capture, as posthog-js (current and 1.x), posthog-node and PostHog's HTTP API send " +
  "events; no API key: the project is found by its `api_token` (`phc_…`) — the batch's `api_key`/`token`, " +
  "else the first event's `token`, `$token`, `api_key` or `properties.token`; without a batch token, events " +
  "of two projects' tokens in one request are a 401. The body is one event, a JSON " +
  'array of events, or `{"batch": [...], "api_key", "sent_at", "historical_migration"}`, sent as JSON, gzip ' +
  '(`compression=gzip-js` or `gzip`, `Content-Encoding: gzip`, or the gzip magic bytes), base64, LZ-string ' +
  '(`compression=lz64`), or a form whose `data` field holds any of these (`GET` with `data=` in the query too). Each event needs `event` and `distinct_id`; `uuid` (a UUID) ' +
  'is generated when absent, and an event re-sent with the same uuid on the same day is stored once. ' +
  '`timestamp` is corrected for the client clock (`sent_at` of the event or batch, or the `_` query ' +
  'parameter; `$ignore_sent_at` turns that off), `offset` (ms before sending) stands for a missing one, and a ' +
  'time more than 23 hours ahead is replaced by the time of receipt. `$ip` is the request address unless the ' +
  "project has `anonymize_ips`. `$set`/`$set_once` update the event's person; with `$process_person_profile: " +
  "false` no person is created or updated, but the event is attached to its distinct id's person if it has one. " +
  '`$snapshot` events are stored as recordings, exactly as `POST /s/` does. The limits of `/s/` ' +
  'apply (docs/limits.md); an event whose properties exceed EVENT_PROPERTIES_MAX_BYTES, whose name or ' +
  'distinct id cannot be stored (NUL, lone surrogate), or older than the retention, is dropped and logged, the ' +
  'rest stored — except in a `historical_migration` batch, where an event older than the retention refuses ' +
  'the whole request (400 `older_than_retention`, nothing stored). A malformed event rejects the whole ' +
  'request (400, nothing stored), and so does one with more than EVENTS_MAX_PERSON_LINKS_PER_REQUEST events ' +
  'linking two distinct ids (`$identify`, `$create_alias`, `$merge_dangerously`) or more than ' +
  'EVENTS_MAX_PERSONS_PER_REQUEST distinct ids of persons. A request is stored whole (persons, events, ' +
  'recordings) or not at all: a lock or statement timeout, or REQUEST_TIMEOUT_MS, is a 503 with `Retry-After` ' +
  'and nothing of it is stored, also later.';

/**
 * The analytics capture endpoints: the body is decoded by the ingest pipeline (the limits, budget and token check
 * of `/s/`); its events other than `$snapshot` go to the events' sink (`EventsIngestionService`), its
 * `$snapshot` events to the recordings', in one transaction.
 */
@ApiTags('capture')
@Controller()
export class EventsCaptureController {
  constructor(
    private readonly pipeline: IngestPipeline,
    private readonly clock: Clock,
  ) {}

  @Post(EVENT_CAPTURE_PATHS)
  @HttpCode(200)
  @Public()
  @RawBody('RECORDING_BODY_LIMIT', { stream: true })
  @DirectRoute()
  @ApiOperation({ summary: 'Capture analytics events', description: DESCRIPTION })
  @ApiConsumes(
    'application/json',
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/octet-stream',
  )
  @ApiQuery({
    name: 'compression',
    required: false,
    enum: ['gzip', 'gzip-js', 'base64', 'lz64', 'lz-string'],
  })
  @ApiQuery({
    name: '_',
    required: false,
    description: 'The time the SDK sent the request (ms since the epoch): corrects the events’ clock skew.',
  })
  @ApiBody({
    schema: {
      type: 'object',
      additionalProperties: true,
      example: {
        api_key: 'phc_…',
        sent_at: '2026-11-27T10:00:00.000Z',
        batch: [
          {
            event: '$pageview',
            uuid: '0192d6c4-8f8a-7c1e-9d57-2a9d3c1e4b5f',
            distinct_id: 'user-1',
            timestamp: '2026-11-27T09:59:59.000Z',
            properties: { $current_url: 'https://example.com/', $session_id: 's-1' },
          },
        ],
      },
    },
  })
  @ApiOkResponse({
    type: EventCaptureResponseDto,
    description: 'Stored (duplicates and dropped events too).',
  })
  @ApiResponse({
    status: 400,
    description:
      'Malformed body or event, or more persons work than one request may ask (links, distinct ids); `attr` names the field.',
    type: ErrorBodyDto,
  })
  @ApiResponse({ status: 401, description: 'Missing or unknown project token.', type: ErrorBodyDto })
  @ApiResponse({
    status: 413,
    description: 'Body, events or JSON values over the limits.',
    type: ErrorBodyDto,
  })
  @ApiResponse({ status: 415, description: 'Unsupported Content-Encoding.', type: ErrorBodyDto })
  @ApiResponse({ status: 429, description: 'Too many requests of this address at once.', type: ErrorBodyDto })
  @ApiResponse({
    status: 503,
    description:
      'CAPTURE_MEMORY_BUDGET is taken, or the request ran out of time (REQUEST_TIMEOUT_MS, a lock or statement ' +
      'timeout: `Retry-After`, nothing stored); retry.',
    type: ErrorBodyDto,
  })
  async captureEvents(@Req() req: RequestWithBodyStream): Promise<EventCaptureResponseDto> {
    const compression = req.query.compression;
    // The body is read as it arrives, within the capture memory budget (docs/limits.md), as on `/s/`.
    const stream = req.bodyStream;
    await this.captureBody(req, {
      stream,
      discard: () => stream?.discard(),
      bytes: Buffer.alloc(0),
      contentType: req.headers['content-type'],
      contentEncoding: req.headers['content-encoding'],
      compression: typeof compression === 'string' ? compression : undefined,
    });
    return { status: 1 };
  }

  @Get(EVENT_CAPTURE_PATHS)
  @Public()
  @DirectRoute()
  @ApiOperation({
    summary: 'Capture analytics events (query string)',
    description:
      'The same capture with the body in the query: `data` (JSON, base64 of it, or base64 of gzip with ' +
      '`compression=gzip-js`), as image-beacon and older clients send it.',
  })
  @ApiQuery({ name: 'data', required: true })
  @ApiQuery({
    name: 'compression',
    required: false,
    enum: ['gzip', 'gzip-js', 'base64', 'lz64', 'lz-string'],
  })
  @ApiOkResponse({ type: EventCaptureResponseDto })
  @ApiResponse({ status: 400, description: 'No `data`, or a malformed one.', type: ErrorBodyDto })
  @ApiResponse({ status: 401, description: 'Missing or unknown project token.', type: ErrorBodyDto })
  async captureEventsFromQuery(@Req() req: Request): Promise<EventCaptureResponseDto> {
    const form = new URLSearchParams();
    const { data, compression } = req.query;
    if (typeof data !== 'string' || data === '') {
      throw ApiError.validation("The 'data' query parameter is required (given once).", 'data', 'required');
    }
    form.set('data', data);
    if (typeof compression === 'string') form.set('compression', compression);
    await this.captureBody(req, {
      bytes: Buffer.from(form.toString()),
      contentType: 'application/x-www-form-urlencoded',
      contentEncoding: undefined,
      compression: undefined,
    });
    return { status: 1 };
  }

  @Post(CAPTURE_V1_PATH)
  @Public()
  @DirectRoute()
  @ApiOperation({
    summary: 'Capture v1 (not served)',
    description:
      "PostHog's capture v1 protocol (Bearer token, per-event results), which posthog-node, posthog-python and " +
      'posthog-go send only when configured for it, is not served: the answer is 404 `capture_v1_not_supported` ' +
      'naming the v0 endpoints to use (`/batch/`, `/i/v0/e/`), which every SDK uses by default.',
  })
  @ApiResponse({ status: 404, description: 'Capture v1 is not served.', type: ErrorBodyDto })
  captureV1(@Req() _req: Request): never {
    throw new ApiError(
      404,
      'capture_v1_not_supported',
      'Capture v1 (POST /i/v1/analytics/events) is not served here. Send events with capture v0: POST /batch/ ' +
        '(or /i/v0/e/) with the project token in the body, which is what the SDKs do by default (posthog-node ' +
        "and posthog-python without capture_mode 'v1', posthog-go with CaptureModeLegacy).",
    );
  }

  private async captureBody(req: Request, body: Parameters<IngestPipeline['capture']>[0]): Promise<void> {
    const origin = {
      endpoint: 'events' as const,
      now: this.clock.now(),
      ip: req.ip ?? null,
      querySentAt: req.query._,
    };
    await this.pipeline.capture(body, origin, deadlineOf(req));
  }
}
