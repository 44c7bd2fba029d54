import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../common/auth/auth.decorators.js';
import { ApiError } from '../common/errors/api-error.js';
import { SessionRecordingsService } from '../session-recordings/reads/session-recordings.service.js';
import { type PageName, ReplayAssets } from './replay-assets.js';
import {
  NOT_BUILT_PAGE,
  NOT_FOUND_PAGE,
  plainPage,
  plainPageCsp,
  playerCsp,
  recordingsBrowserPage,
  sharedRecordingPage,
} from './replay-pages.js';

/** A year: bundle names carry their content hash, so a name's content never changes. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

type Framing = 'deny' | 'any';

/**
 * The pages for people (HTML, not part of the JSON API, so not in the OpenAPI document): a shared recording
 * (`/shared/:access_token`), its embeddable player (`/embedded/:access_token`, the only page any site may frame),
 * the recordings browser (`/replay`) and their bundles (`/replay/assets/:file`). Each page sends its own content
 * security policy (`playerCsp`), replacing the service-wide one.
 */
@ApiExcludeController()
@Controller()
export class ReplayController {
  constructor(
    private readonly recordings: SessionRecordingsService,
    private readonly assets: ReplayAssets,
  ) {}

  @Get('shared/:access_token')
  @Public()
  shared(@Param('access_token') accessToken: string, @Res() res: Response): Promise<void> {
    return this.sharedPage(accessToken, false, res);
  }

  @Get('embedded/:access_token')
  @Public()
  embedded(@Param('access_token') accessToken: string, @Res() res: Response): Promise<void> {
    return this.sharedPage(accessToken, true, res);
  }

  @Get('replay')
  @Public()
  browser(@Res() res: Response): void {
    const assets = this.page('replay', res, 'deny');
    if (assets) this.html(res, 200, recordingsBrowserPage(assets), playerCsp("'none'"), 'deny');
  }

  @Get('replay/assets/:file')
  @Public()
  asset(@Param('file') file: string, @Req() req: Request, @Res() res: Response): void {
    const asset = this.assets.find(file);
    if (!asset) throw ApiError.notFound();
    res.setHeader('Content-Type', asset.contentType);
    res.setHeader('Cache-Control', IMMUTABLE);
    res.setHeader('Vary', 'Accept-Encoding');
    // The build's gzip copy for browsers that take it (all do): a third of the bytes, no work per request.
    const gzip = asset.gzipPath !== null && req.acceptsEncodings('gzip', 'identity') === 'gzip';
    if (gzip) res.setHeader('Content-Encoding', 'gzip');
    const path = gzip ? asset.gzipPath! : asset.path;
    res.sendFile(path, { cacheControl: false, dotfiles: 'deny', etag: false }, (error) => {
      // The file was listed at start; what remains is a client that went away mid-transfer.
      if (error && !res.headersSent) res.status(404).json(ApiError.notFound().body);
    });
  }

  private async sharedPage(accessToken: string, embedded: boolean, res: Response): Promise<void> {
    const framing: Framing = embedded ? 'any' : 'deny';
    const ancestors = embedded ? '*' : "'none'";
    let recording;
    try {
      recording = await this.recordings.shared(accessToken);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      const page =
        error.getStatus() === 404 ? NOT_FOUND_PAGE : plainPage('Recording unavailable', error.detail);
      for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
      this.html(res, error.getStatus(), page, plainPageCsp(ancestors), framing);
      return;
    }
    const assets = this.page('shared', res, framing);
    if (!assets) return;
    this.html(
      res,
      200,
      sharedRecordingPage(assets, accessToken, recording, embedded),
      playerCsp(ancestors),
      framing,
    );
  }

  /** A page's bundles; when the player was not built, answers 503 with a page saying so and returns null. */
  private page(name: PageName, res: Response, framing: Framing) {
    const assets = this.assets.page(name);
    if (!assets) {
      this.html(res, 503, NOT_BUILT_PAGE, plainPageCsp(framing === 'any' ? '*' : "'none'"), framing);
    }
    return assets;
  }

  private html(res: Response, status: number, body: string, csp: string, framing: Framing): void {
    res.status(status);
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    // The pages carry a sharing token or lead to a key; no cache keeps them.
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Content-Security-Policy', csp);
    if (framing === 'any') res.removeHeader('X-Frame-Options');
    else res.setHeader('X-Frame-Options', 'DENY');
    res.send(body);
  }
}
