import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { ApiError } from '../common/errors/api-error.js';
import { AppConfig } from '../config/config.js';
import type { ProjectEntity } from '../projects/project.entity.js';
import { ProjectsService } from '../projects/projects.service.js';
import { flagsResponse, type FlagsResponse, type FlagsRoute, protocolVersion } from './flags-response.js';
import { type RemoteConfig, remoteConfigFor } from './remote-config.js';
import { decodeSdkBody, tokenOf } from './sdk-payload.js';

/** Longest project token looked up (the column's length); longer ones cannot exist. */
const MAX_TOKEN_LENGTH = 64;

/**
 * The 401 bodies of `/flags` and `/decide` for a missing or unknown project token, with PostHog's codes:
 * posthog-js records the status (`FeatureFlagError.apiError`) and carries on without flags or config.
 */
const NO_TOKEN = () =>
  new ApiError(
    401,
    'no_api_key',
    'No project API key provided. You can find your project API key in the project settings (GET /api/projects/:id, api_token).',
    null,
    'authentication_error',
  );
const INVALID_TOKEN = () =>
  new ApiError(
    401,
    'invalid_api_key',
    'Project API key invalid. You can find your project API key in the project settings (GET /api/projects/:id, api_token).',
    null,
    'authentication_error',
  );

@Injectable()
export class SdkService {
  private readonly bodyLimit: number;

  constructor(
    private readonly projects: ProjectsService,
    config: AppConfig,
  ) {
    this.bodyLimit = config.get('BODY_LIMIT');
  }

  private async projectFor(token: string | null): Promise<ProjectEntity | null> {
    if (!token || token.length > MAX_TOKEN_LENGTH) return null;
    return this.projects.findByApiToken(token);
  }

  /** The remote config of the project the token in the path names; 404 when none does. */
  async remoteConfig(token: string): Promise<RemoteConfig> {
    const project = await this.projectFor(token);
    if (!project) throw ApiError.notFound('No project has this token.');
    return remoteConfigFor(project);
  }

  /** `/flags` and `/decide`: the token comes in the body (any of the SDK's encodings). */
  async flags(route: FlagsRoute, req: Request): Promise<FlagsResponse> {
    const payload = await this.payloadOf(req);
    const token = tokenOf(payload, req.query.token);
    if (!token) throw NO_TOKEN();
    const project = await this.projectFor(token);
    if (!project) throw INVALID_TOKEN();
    return flagsResponse(remoteConfigFor(project), route, protocolVersion(req.query.v));
  }

  /** The request's JSON payload: parsed already (an `application/json` body), else read and decoded here. */
  private async payloadOf(req: Request): Promise<unknown> {
    if (req.body !== undefined && !Buffer.isBuffer(req.body)) return req.body as unknown;
    const raw = Buffer.isBuffer(req.body) ? req.body : await readBody(req, this.bodyLimit);
    if (!raw.length) return null;
    const compression = typeof req.query.compression === 'string' ? req.query.compression : undefined;
    return decodeSdkBody({
      raw,
      compression,
      contentType: req.headers['content-type'],
      contentEncoding: req.headers['content-encoding'],
      limit: this.bodyLimit,
    });
  }
}

const tooLarge = () => new ApiError(413, 'payload_too_large', 'The request body is too large.');

/** The request body as bytes, at most `limit` of them (413 beyond). */
async function readBody(req: Request, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
