import { Controller, Get, Param, Query, Res } from '@nestjs/common';
import {
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiProduces,
  ApiQuery,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../common/auth/auth.decorators.js';
import { ApiError } from '../common/errors/api-error.js';
import { ErrorBodyDto } from '../common/errors/error-body.dto.js';
import { isSdkVersion, SDK_SCRIPTS, SdkAssets } from './sdk-assets.js';

/** A year, for URLs naming the exact SDK version (their content never changes). */
const IMMUTABLE = 'public, max-age=31536000, immutable';
/**
 * An hour, for URLs without the installed version (none, or another SDK's): they get the installed package's
 * script, so a newer package reaches browsers within it.
 */
const SHORT = 'public, max-age=3600';

const FILE_PARAM = {
  name: 'file',
  description: `One of ${SDK_SCRIPTS.map((f) => `\`${f}\``).join(', ')} (or its \`.map\`). Anything else is 404.`,
  example: 'lazy-recorder.js',
};

/**
 * The SDK's scripts from the installed `posthog-js` package: the lazily loaded recorder the SDK fetches once
 * the remote config enables recording, and the SDK bundles for script-tag installs. Public, any origin.
 */
@ApiTags('sdk')
@Controller('static')
export class SdkAssetsController {
  constructor(private readonly assets: SdkAssets) {}

  @Get(':file')
  @Public()
  @ApiOperation({
    summary: 'An SDK script',
    description:
      'Served from the installed posthog-js package, with ETag/Last-Modified. Cached for a year when `v` is the installed version, else for an hour.',
  })
  @ApiParam(FILE_PARAM)
  @ApiQuery({ name: 'v', required: false, description: 'SDK version the page runs (sent by the SDK).' })
  @ApiProduces('text/javascript')
  @ApiOkResponse({ description: 'The script.', schema: { type: 'string' } })
  @ApiResponse({ status: 304, description: 'Not modified: the ETag or date the browser sent is current.' })
  @ApiNotFoundResponse({ description: 'Not one of the served files.', type: ErrorBodyDto })
  script(@Param('file') file: string, @Query('v') v: unknown, @Res() res: Response): void {
    this.send(res, file, v === this.assets.version ? IMMUTABLE : SHORT);
  }

  @Get(':version/:file')
  @Public()
  @ApiOperation({
    summary: 'An SDK script, at the path naming the SDK version',
    description:
      "The path the SDK asks for first (`strict_script_versioning`, on by default as `'fallback'`): `/static/<posthog.version>/<kind>.js`. Any SDK version gets the installed package's script (so a site running a newer or older posthog-js loads without errors). Cached for a year when `version` is the installed version, else for an hour (the content follows the installed package). A `version` that is not `major.minor.patch[-pre.release]` is 404.",
  })
  @ApiParam({
    name: 'version',
    description: 'SDK version, `major.minor.patch` with an optional pre-release (`1.450.0-beta.1`).',
    example: '1.449.2',
  })
  @ApiParam(FILE_PARAM)
  @ApiProduces('text/javascript')
  @ApiOkResponse({ description: 'The script.', schema: { type: 'string' } })
  @ApiResponse({ status: 304, description: 'Not modified: the ETag or date the browser sent is current.' })
  @ApiNotFoundResponse({
    description: 'Not a version string, or not one of the served files.',
    type: ErrorBodyDto,
  })
  versionedScript(
    @Param('version') version: string,
    @Param('file') file: string,
    @Res() res: Response,
  ): void {
    if (!isSdkVersion(version))
      throw ApiError.notFound('Not an SDK version: expected major.minor.patch, e.g. 1.449.2.');
    this.send(res, file, version === this.assets.version ? IMMUTABLE : SHORT);
  }

  private send(res: Response, file: string, cacheControl: string): void {
    const asset = this.assets.find(file);
    if (!asset) throw ApiError.notFound();
    res.setHeader('Content-Type', asset.contentType);
    res.setHeader('Cache-Control', cacheControl);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    // Sent as is by sendFile, which also answers a matching If-None-Match with 304.
    res.setHeader('ETag', asset.etag);
    res.sendFile(asset.path, { cacheControl: false, dotfiles: 'deny' }, (error) => {
      // The file was checked a moment ago; what remains is a client that went away mid-transfer.
      if (error && !res.headersSent) {
        res.status(404).json(ApiError.notFound().body);
      }
    });
  }
}
