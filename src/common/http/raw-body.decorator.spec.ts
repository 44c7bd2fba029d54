import { describe, expect, it } from '@jest/globals';
import { Controller, Get, Post } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { RawBody, rawBodyRoutes } from './raw-body.decorator.js';

@Controller()
class RootController {
  @Post('s')
  @RawBody('RECORDING_BODY_LIMIT')
  capture(): void {}

  @Post(['flags', '/decide/'])
  @RawBody('BODY_LIMIT')
  flags(): void {}

  @Post('e')
  json(): void {}
}

@Controller('/api/things/')
class NestedController {
  @Post(':id/upload')
  @RawBody('BODY_LIMIT')
  upload(): void {}

  @Get()
  list(): void {}
}

describe('rawBodyRoutes', () => {
  it('lists exactly the routes marked @RawBody, with their full paths and limit settings', async () => {
    const moduleRef = await Test.createTestingModule({
      controllers: [RootController, NestedController],
    }).compile();
    const app = moduleRef.createNestApplication();
    const routes = rawBodyRoutes(app).sort((a, b) => a.path.localeCompare(b.path));
    expect(routes).toEqual([
      { path: '/api/things/:id/upload', limit: 'BODY_LIMIT' },
      { path: '/decide', limit: 'BODY_LIMIT' },
      { path: '/flags', limit: 'BODY_LIMIT' },
      { path: '/s', limit: 'RECORDING_BODY_LIMIT' },
    ]);
    await app.close();
  });
});
