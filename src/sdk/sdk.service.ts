import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import type { JsonLimits } from '../ingest/bounded-json.js';
import { decodeCaptureBody } from '../ingest/capture-body.js';
import { isLookupableToken } from '../ingest/capture-text.js';
import type { Principal } from '../common/auth/principal.js';
import { ApiError } from '../common/errors/api-error.js';
import { AppConfig } from '../config/config.js';
import type { ProjectEntity } from '../projects/project.entity.js';
import { ProjectsService } from '../projects/projects.service.js';
import { protocolVersion, tokenOf } from './flags-request.js';
import { flagsResponse, type FlagsResponse, type FlagsRoute } from './flags-response.js';
import { type RemoteConfig, remoteConfigFor } from './remote-config.js';
import type { FlagsQueryDto } from './dto/flags-query.dto.js';
import { emptyFlagDefinitions, type FlagDefinitionsDto } from './dto/flag-definitions.dto.js';
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

/**
 * The 401 of the definitions poll for a token no project the key reaches has (unknown, or of an organization
 * the key's user is not a member of: the two are not told apart). The SDKs log it as an invalid key pair.
 */
const NO_PROJECT_FOR_TOKEN = () =>
  ApiError.authenticationFailed(
    "No project of the key's organizations has this token: pass the project's api_token (GET /api/projects/:id) as ?token=.",
  );

@Injectable()
export class SdkService {
  private readonly limits: JsonLimits;

  constructor(
    private readonly projects: ProjectsService,
    config: AppConfig,
  ) {
    this.limits = {
      maxBytes: config.get('BODY_LIMIT'),
      maxDepth: config.get('PUBLIC_JSON_MAX_DEPTH'),
      maxValues: config.get('PUBLIC_JSON_MAX_VALUES'),
      maxKeys: config.get('PUBLIC_JSON_MAX_KEYS'),
    };
  }

  /** The project of a public token; null for none, also for a token no project could have (NUL, too long). */
  private async projectFor(token: string | null): Promise<ProjectEntity | null> {
    return token && isLookupableToken(token) ? this.projects.findByApiToken(token) : null;
  }

  /** The remote config of the project the token in the path names; 404 when none does. */
  async remoteConfig(token: string): Promise<RemoteConfig> {
    const project = await this.projectFor(token);
    if (!project) throw ApiError.notFound('No project has this token.');
    return remoteConfigFor(project);
  }

  /** `/flags` and `/decide`: the token comes in the body (any of the SDK's encodings). */
  async flags(route: FlagsRoute, req: Request, query: FlagsQueryDto): Promise<FlagsResponse> {
    const payload = await this.payloadOf(req, query);
    const token = tokenOf(payload, query.token);
    if (!token) throw NO_TOKEN();
    const project = await this.projectFor(token);
    if (!project) throw INVALID_TOKEN();
    return flagsResponse(remoteConfigFor(project), route, protocolVersion(query.v));
  }

  /**
   * The feature flag definitions of the project a server SDK names by its token, for a key whose user may see
   * that project: none, as the service has no feature flags (`GET /flags/definitions`).
   */
  async flagDefinitions(principal: Principal, token: unknown): Promise<FlagDefinitionsDto> {
    if (token === undefined || token === '') {
      throw ApiError.validation(
        "The project's token is required: ?token=<api_token of the project>.",
        'token',
        'required',
      );
    }
    if (typeof token !== 'string') throw ApiError.validation('Must be one string.', 'token');
    const project = await this.projectFor(token);
    if (!project) throw NO_PROJECT_FOR_TOKEN();
    try {
      await this.projects.requireAccessible(principal, project.id);
    } catch (error) {
      // Another organization's project: as an unknown token (a 403 for a key restricted to other projects stays).
      if (error instanceof ApiError && error.getStatus() === 404) throw NO_PROJECT_FOR_TOKEN();
      throw error;
    }
    return emptyFlagDefinitions();
  }

  /**
   * The definitions poll with a project secret credential (`phs_…`, authenticated by the guard) instead of a
   * personal API key: it answers for the credential's project. 401 when `token` is given and is not that
   * project's api_token (PostHog's secret-token path does not need it).
   */
  async flagDefinitionsForProject(projectId: number, token: unknown): Promise<FlagDefinitionsDto> {
    if (token !== undefined && token !== '' && typeof token !== 'string') {
      throw ApiError.validation('Must be one string.', 'token');
    }
    const project = await this.projects.findById(projectId);
    if (!project) throw ApiError.authenticationFailed();
    if (typeof token === 'string' && token !== '' && token !== project.apiToken) {
      throw ApiError.authenticationFailed(
        "The token is not the api_token of the secret token's project: pass that project's api_token, or none.",
      );
    }
    return emptyFlagDefinitions();
  }

  /**
   * The request's JSON payload. The body arrives raw (the routes are marked `@RawBody`) and
   * is decoded like a capture body: JSON, gzip, form `data=` with base64 or JSON, or bare base64. No body:
   * null (the token may still come in the query). Decoding is bounded like capture's: BODY_LIMIT decoded
   * bytes, PUBLIC_JSON_MAX_DEPTH and PUBLIC_JSON_MAX_VALUES.
   */
  private async payloadOf(req: Request, query: FlagsQueryDto): Promise<unknown> {
    const raw: unknown = req.body;
    if (!Buffer.isBuffer(raw) || !raw.length) return null;
    return decodeCaptureBody(
      {
        bytes: raw,
        contentType: req.headers['content-type'],
        contentEncoding: req.headers['content-encoding'],
        compression: typeof query.compression === 'string' ? query.compression : undefined,
      },
      this.limits,
    );
  }
}
