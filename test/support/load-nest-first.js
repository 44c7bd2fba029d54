// @nestjs/throttler is a CommonJS package that require()s the ES modules @nestjs/common and @nestjs/core. Node
// runs it after they are evaluated, but Jest's ESM loader walks a test's import graph and would run it while
// they are still being loaded (ERR_REQUIRE_CYCLE_MODULE). Loading them first, before each test file, avoids it.
await import('@nestjs/common');
await import('@nestjs/core');
