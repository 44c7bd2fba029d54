import { Controller, HttpCode, Post, Req } from '@nestjs/common';
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
import { Public } from '../common/auth/auth.decorators.js';
import { ErrorBodyDto } from '../common/errors/error-body.dto.js';
import { DirectRoute } from '../common/http/direct-route.js';
import { RawBody } from '../common/http/raw-body.decorator.js';
import { deadlineOf } from '../common/http/request-deadline.js';
import type { RequestWithBodyStream } from '../common/http/raw-body.middleware.js';
import { Clock } from '../common/time/clock.js';
import { IngestPipeline } from '../ingest/ingest-pipeline.js';

export class CaptureResponseDto {
  @ApiProperty({ example: 'Ok' })
  status: string;
}

@ApiTags('capture')
@Controller()
export class CaptureController {
  constructor(
    private readonly pipeline: IngestPipeline,
    private readonly clock: Clock,
  ) {}

  @Post('s')
  @HttpCode(200)
  @Public()
  @RawBody('RECORDING_BODY_LIMIT', { stream: true })
  // The hottest public route: run ahead of the global guards, interceptors and pipes (common/http/direct-route.ts).
  @DirectRoute()
  @ApiOperation({
    summary: 'Capture session recording snapshots',
    description:
      "PostHog's recording capture endpoint, as the browser SDK (posthog-js) calls it; no API key. The project " +
      "is found by its `api_token` (`phc_…`) in the first event's `token`, `$token` or `api_key`, else its " +
      '`properties.token` — checked as soon as the first event is decoded, so the rest of a large body with a ' +
      'missing or unknown token is not read (a gzip body inflating to at most 128 KiB is parsed at once). The body is a JSON array of events or one event, sent as JSON, gzip (query ' +
      '`compression=gzip` or `gzip-js`, `Content-Encoding: gzip`, or just the gzip magic bytes), a form with a ' +
      '`data` field (JSON, or base64 with `compression=base64`), or base64. Limits, checked while the body is ' +
      'decoded (docs/limits.md): RECORDING_BODY_LIMIT (25mb) received and decoded bytes (received: at most ' +
      'CAPTURE_MEMORY_BUDGET / PUBLIC_MAX_CONCURRENT_PER_IP, 12 MiB by default), PUBLIC_JSON_MAX_KEYS (10,000) keys per object, CAPTURE_MAX_EVENTS ' +
      '(50,000) events, CAPTURE_MAX_SESSIONS (100) recordings (distinct `$session_id`), ' +
      'CAPTURE_MAX_SNAPSHOT_EVENTS (100,000) rrweb events per `$snapshot`, ' +
      'PUBLIC_JSON_MAX_VALUES (1,000,000) JSON values — 413 — and PUBLIC_JSON_MAX_DEPTH (1,000) levels — 400; ' +
      'at most PUBLIC_MAX_CONCURRENT_PER_IP (8) requests of one address at a time — 429. Each `$snapshot` event ' +
      'needs `properties.$session_id` (≤ 70 of `[A-Za-z0-9-]`), `properties.$snapshot_data` (an array of rrweb ' +
      'events, each with an integer `type` and a `timestamp` in epoch milliseconds) and `distinct_id` (top level ' +
      'or in properties, ≤ 200 characters); `$window_id` defaults to the session id, `$snapshot_source` is ' +
      "`mobile` or else `web`, `$set`/`$set_once` update the person's properties within PERSON_SET_MAX_KEYS " +
      '(1,000 values) and PERSON_SET_MAX_BYTES (64 KB) per request and person — a `$set` past them is dropped, ' +
      'its event stored — and PERSON_PROPERTIES_MAX_BYTES (512 KB) per person — an update past it is not ' +
      'applied (docs/limits.md#persons). Other events are ignored. A ' +
      'malformed event rejects the whole request (nothing is stored). Values that cannot be stored — NUL or a ' +
      'lone UTF-16 surrogate — are dropped instead, with one warning in the log: the event when its ' +
      '`distinct_id` or `$session_id` has one, else just the value (`uuid`, `$window_id`, a `$set`/`$set_once` ' +
      'property); the rest of the batch is stored, and rrweb events are stored exactly as captured. Re-sending an ' +
      'event with the same `uuid` (or, without one, the same window and snapshot data) changes nothing; ' +
      'snapshots of a deleted recording, or past RECORDING_SESSION_MAX_EVENTS / _BYTES of a recording, are ' +
      'dropped (still 200).',
  })
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
  @ApiBody({
    schema: {
      type: 'array',
      items: { type: 'object', additionalProperties: true },
      example: [
        {
          event: '$snapshot',
          uuid: '0192d6c4-8f8a-7c1e-9d57-2a9d3c1e4b5f',
          distinct_id: 'user-1',
          properties: {
            token: 'phc_…',
            $session_id: '0192d6c4-8f8a-7c1e-9d57-000000000001',
            $window_id: '0192d6c4-8f8a-7c1e-9d57-000000000002',
            $snapshot_data: [
              {
                type: 4,
                timestamp: 1795255200000,
                data: { href: 'https://example.com/', width: 1280, height: 800 },
              },
            ],
          },
        },
      ],
    },
  })
  @ApiOkResponse({ type: CaptureResponseDto, description: 'Accepted (or dropped, for a deleted recording).' })
  @ApiResponse({
    status: 400,
    description:
      'Malformed body or event (`attr` names the field), or JSON nested deeper than PUBLIC_JSON_MAX_DEPTH.',
    type: ErrorBodyDto,
  })
  @ApiResponse({ status: 401, description: 'Missing or unknown project token.', type: ErrorBodyDto })
  @ApiResponse({
    status: 413,
    description:
      'Body over RECORDING_BODY_LIMIT (received or decoded), or more events, recordings, rrweb events per `$snapshot` or JSON values than allowed; also a body too large to decode within CAPTURE_MEMORY_BUDGET. Nothing of the request is stored.',
    type: ErrorBodyDto,
  })
  @ApiResponse({ status: 415, description: 'Unsupported Content-Encoding.', type: ErrorBodyDto })
  @ApiResponse({
    status: 429,
    description:
      'More than PUBLIC_MAX_CONCURRENT_PER_IP requests of this address in flight on the SDK routes; `Retry-After: 1`.',
    type: ErrorBodyDto,
  })
  @ApiResponse({
    status: 503,
    description:
      'The capture requests in progress hold CAPTURE_MEMORY_BUDGET; `Retry-After: 1` (the SDK retries). Or ' +
      '`timeout`: not stored within REQUEST_TIMEOUT_MS, and then nothing of the request is stored, even later.',
    type: ErrorBodyDto,
  })
  async captureSnapshots(@Req() req: RequestWithBodyStream): Promise<CaptureResponseDto> {
    // `compression` (gzip, gzip-js, base64) says how the body is encoded; anything else, or a repeated
    // parameter, lets the body's own bytes decide. Other query parameters (posthog-js sends `ver`, `_`) are ignored.
    const compression = req.query.compression;
    // The body is read as it arrives, within the capture memory budget (docs/limits.md).
    const stream = req.bodyStream;
    await this.pipeline.capture(
      {
        stream,
        discard: () => stream?.discard(),
        bytes: Buffer.alloc(0),
        contentType: req.headers['content-type'],
        contentEncoding: req.headers['content-encoding'],
        compression: typeof compression === 'string' ? compression : undefined,
      },
      { endpoint: 'recordings', now: this.clock.now(), ip: req.ip ?? null },
      deadlineOf(req),
    );
    return { status: 'Ok' };
  }
}
