import { Controller, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiProduces,
  ApiQuery,
  ApiResponse,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../common/auth/auth.decorators.js';
import { ApiError } from '../common/errors/api-error.js';
import { ErrorBodyDto } from '../common/errors/error-body.dto.js';
import { RawBody } from '../common/http/raw-body.decorator.js';
import { flagsResponse, type FlagsResponse } from './flags-response.js';
import { type RemoteConfig, remoteConfigFor, remoteConfigScript } from './remote-config.js';
import { FlagsQueryDto } from './dto/flags-query.dto.js';
import { SdkService } from './sdk.service.js';

const EXAMPLE_TOKEN = 'phc_0123456789abcdefghijABCDEFGHIJ0123456789abc';
const EXAMPLE_CONFIG = remoteConfigFor({ apiToken: EXAMPLE_TOKEN, sessionRecordingOptIn: true });

/** How long browsers and proxies may keep a remote config: a settings change reaches pages within this. */
const CONFIG_CACHE = 'public, max-age=60';

const TOKEN_PARAM = {
  name: 'token',
  description: "The project's public token (`api_token` of `GET /api/projects/:id`).",
  example: EXAMPLE_TOKEN,
};
const UNKNOWN_TOKEN = { description: 'No project has this token.', type: ErrorBodyDto };
const BAD_TOKEN = {
  description:
    'No token in the body (`no_api_key`) or no project has it (`invalid_api_key`), type `authentication_error`.',
  type: ErrorBodyDto,
};
const FLAGS_BODY = {
  description:
    'What the SDK sends: at least the project token (`token`, `api_key` or `$token`), e.g. `{"token": "phc_…", "distinct_id": "…"}`. JSON, gzip (`?compression=gzip-js` or `Content-Encoding: gzip`), a form field `data` holding base64 or JSON (`?compression=base64`), or a bare base64 body.',
  schema: { type: 'object', example: { token: EXAMPLE_TOKEN, distinct_id: 'user-1' } },
};
const CONCURRENCY = {
  status: 429,
  description:
    'More than PUBLIC_MAX_CONCURRENT_PER_IP requests of this address in flight on the SDK routes; `Retry-After: 1`.',
  type: ErrorBodyDto,
};
const BAD_BODY = {
  status: 400,
  description:
    'A body that is not valid JSON (in any of the encodings), or nested deeper than PUBLIC_JSON_MAX_DEPTH.',
  type: ErrorBodyDto,
};
const LARGE_BODY = {
  status: 413,
  description:
    'A body over BODY_LIMIT (received or decoded) or with more than PUBLIC_JSON_MAX_VALUES JSON values.',
  type: ErrorBodyDto,
};
const FLAGS_VERSION = {
  name: 'v',
  required: false,
  description:
    'Protocol version the SDK speaks; shapes the (empty) flag fields. Other parameters are ignored.',
};

/**
 * Routes the browser SDK (posthog-js) calls before it records: its remote config, and the feature flag
 * endpoints of older versions. Public — they carry only the project's public token — and answered to any
 * origin (see `sdkCors`).
 */
@ApiTags('sdk')
@Controller()
export class SdkController {
  constructor(private readonly sdk: SdkService) {}

  @Get('array/:token/config')
  @Public()
  @ApiOperation({
    summary: "The SDK's remote config (JSON)",
    description:
      'What the SDK fetches at start-up. `sessionRecording` is `{"endpoint": "/s/", …}` while the project records (`session_recording_opt_in`), else `false`; `supportedCompression` is `["gzip", "gzip-js"]`; `hasFeatureFlags` is false (the service has none); autocapture, heatmaps, surveys, exception/log/performance capture are off because the service stores recordings only. Cached for 60 seconds.',
  })
  @ApiParam(TOKEN_PARAM)
  @ApiOkResponse({ description: 'The remote config.', schema: { type: 'object', example: EXAMPLE_CONFIG } })
  @ApiNotFoundResponse(UNKNOWN_TOKEN)
  @ApiResponse(CONCURRENCY)
  async config(
    @Param('token') token: string,
    @Res({ passthrough: true }) res: Response,
  ): Promise<RemoteConfig> {
    const config = await this.sdk.remoteConfig(token);
    res.setHeader('Cache-Control', CONFIG_CACHE);
    return config;
  }

  @Get('array/:token/config.js')
  @Public()
  @ApiOperation({
    summary: "The SDK's remote config (script)",
    description:
      'The same config as `/array/:token/config`, as a script that stores `{config, siteApps: []}` in `window._POSTHOG_REMOTE_CONFIG[token]`, which is where the SDK looks for it. Cached for 60 seconds.',
  })
  @ApiParam(TOKEN_PARAM)
  @ApiProduces('text/javascript')
  @ApiOkResponse({ description: 'The script.', schema: { type: 'string' } })
  @ApiNotFoundResponse(UNKNOWN_TOKEN)
  @ApiResponse(CONCURRENCY)
  async configScript(
    @Param('token') token: string,
    @Res({ passthrough: true }) res: Response,
  ): Promise<string> {
    const script = remoteConfigScript(await this.sdk.remoteConfig(token));
    // Set once the token is known to be good: a 404 keeps the JSON error body and is not cached.
    res.setHeader('Content-Type', 'text/javascript; charset=utf-8');
    res.setHeader('Cache-Control', CONFIG_CACHE);
    return script;
  }

  @Post('flags')
  @Public()
  @HttpCode(200)
  @RawBody('BODY_LIMIT')
  @ApiOperation({
    summary: 'Feature flags and remote config',
    description:
      'Called by SDK versions that read their config from the flags endpoint (`/flags/?v=2&config=true`). Answers the remote config (as `/array/:token/config`) with an empty set of feature flags: `flags`, `featureFlags` and `featureFlagPayloads` are `{}`, `errorsWhileComputingFlags` false — the service has no feature flags.',
  })
  @ApiConsumes('application/json', 'text/plain', 'application/x-www-form-urlencoded')
  @ApiBody(FLAGS_BODY)
  @ApiQuery(FLAGS_VERSION)
  @ApiOkResponse({
    description: 'Remote config and no flags.',
    schema: { type: 'object', example: flagsResponse(EXAMPLE_CONFIG, 'flags', 2) },
  })
  @ApiUnauthorizedResponse(BAD_TOKEN)
  @ApiResponse(BAD_BODY)
  @ApiResponse(LARGE_BODY)
  @ApiResponse(CONCURRENCY)
  flags(@Req() req: Request, @Query() query: FlagsQueryDto): Promise<FlagsResponse> {
    return this.sdk.flags('flags', req, query);
  }

  @Post('decide')
  @Public()
  @HttpCode(200)
  @RawBody('BODY_LIMIT')
  @ApiOperation({
    summary: 'Feature flags and remote config (older SDK versions)',
    description:
      'The predecessor of `/flags`, as older SDK versions call it (`/decide/?v=3`, `?v=4`): the remote config with an empty set of feature flags. `featureFlags` is `[]` for `v` 1 (or none), `{}` from 2; `featureFlagPayloads` from 3; `flags` from 4.',
  })
  @ApiConsumes('application/json', 'text/plain', 'application/x-www-form-urlencoded')
  @ApiBody(FLAGS_BODY)
  @ApiQuery(FLAGS_VERSION)
  @ApiOkResponse({
    description: 'Remote config and no flags.',
    schema: { type: 'object', example: flagsResponse(EXAMPLE_CONFIG, 'decide', 4) },
  })
  @ApiUnauthorizedResponse(BAD_TOKEN)
  @ApiResponse(BAD_BODY)
  @ApiResponse(LARGE_BODY)
  @ApiResponse(CONCURRENCY)
  decide(@Req() req: Request, @Query() query: FlagsQueryDto): Promise<FlagsResponse> {
    return this.sdk.flags('decide', req, query);
  }
}

/** The legacy people endpoint of the capture protocol (events go to `/e/` and the others, src/events). */
export const ANALYTICS_PATHS = ['engage'];

/**
 * PostHog's legacy people endpoint (`/engage/`), answered with an explicit refusal: current SDKs send person
 * updates as events (`$identify`, `$set`), which the events module stores. A 4xx, because posthog-js retries 5xx
 * and network failures but not 4xx (`RetryQueue` in `lib/src/retry-queue.js`).
 */
@ApiTags('sdk')
@Controller()
export class AnalyticsRefusalController {
  @Post(ANALYTICS_PATHS)
  @Public()
  @ApiOperation({
    summary: 'Legacy people updates: not accepted',
    description:
      'Always 404 `analytics_not_supported`: send person updates as events (`$identify`, `$set`) to `POST /e/`.',
  })
  @ApiNotFoundResponse({ description: 'The legacy people endpoint is not supported.', type: ErrorBodyDto })
  refuse(): never {
    throw new ApiError(
      404,
      'analytics_not_supported',
      'The legacy /engage/ people endpoint is not supported: send person updates as $identify or $set events to /e/.',
    );
  }
}
