import { Controller, Get, HttpCode, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../common/auth/auth.decorators.js';
import { ApiError } from '../common/errors/api-error.js';
import { ErrorBodyDto } from '../common/errors/error-body.dto.js';
import { ReadinessChecks } from '../common/health/readiness-checks.js';
import { DatabaseProbe } from '../database/database-probe.js';
import { ShutdownState } from './shutdown-state.js';

const READINESS_TIMEOUT_MS = 2000;

@ApiTags('health')
@Controller()
export class HealthController {
  constructor(
    private readonly database: DatabaseProbe,
    private readonly shutdown: ShutdownState,
    private readonly checks: ReadinessChecks,
  ) {}

  @Get('healthz')
  @Public()
  @HttpCode(200)
  @ApiOperation({ summary: 'Liveness', description: 'The process is up. Checks no dependency.' })
  @ApiOkResponse({ schema: { example: { status: 'ok' } } })
  liveness(): { status: string } {
    return { status: 'ok' };
  }

  @Get('readyz')
  @Public()
  @ApiOperation({
    summary: 'Readiness',
    description:
      'The database answers, the process is not shutting down, and no part of it is stuck: 503 while the ' +
      'capture memory budget has been exhausted (requests refused or waiting, none ending) for longer than ' +
      'twice REQUEST_TIMEOUT_MS (docs/limits.md).',
  })
  @ApiOkResponse({ schema: { example: { status: 'ok', database: 'up' } } })
  @ApiServiceUnavailableResponse({ type: ErrorBodyDto })
  async readiness(@Res({ passthrough: true }) res: Response): Promise<unknown> {
    if (this.shutdown.draining) {
      res.status(503);
      return ApiError.unavailable('Shutting down.').body;
    }
    const stuck = this.checks.failure();
    if (stuck) {
      res.status(503);
      return ApiError.unavailable(stuck).body;
    }
    try {
      await Promise.race([
        this.database.ping(),
        new Promise((_, reject) =>
          setTimeout(() => reject(new Error('timeout')), READINESS_TIMEOUT_MS).unref(),
        ),
      ]);
      return { status: 'ok', database: 'up' };
    } catch {
      res.status(503);
      return ApiError.unavailable('The database is unreachable.').body;
    }
  }
}
