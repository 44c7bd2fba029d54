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
import { SDK_SCRIPTS, SdkAssets } from './sdk-assets.js';

/** A year, for URLs naming the exact SDK version (their content never changes). */
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** An hour, for unversioned URLs: a newer package reaches browsers within it. */
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
    summary: 'An SDK script of an exact version',
    description:
      'The path the SDK uses with `strict_script_versioning`. Only the installed version exists (404 for any other); cached for a year.',
  })
  @ApiParam({ name: 'version', description: 'SDK version.', example: '1.434.18' })
  @ApiParam(FILE_PARAM)
  @ApiProduces('text/javascript')
  @ApiOkResponse({ description: 'The script.', schema: { type: 'string' } })
  @ApiResponse({ status: 304, description: 'Not modified: the ETag or date the browser sent is current.' })
  @ApiNotFoundResponse({
    description: 'Another version, or not one of the served files.',
    type: ErrorBodyDto,
  })
  versionedScript(
    @Param('version') version: string,
    @Param('file') file: string,
    @Res() res: Response,
  ): void {
    if (version !== this.assets.version)
      throw ApiError.notFound(`Only SDK version ${this.assets.version} is served.`);
    this.send(res, file, IMMUTABLE);
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
