// The Jest runner of both projects: Jest's own (jest-runner), with one rule added for parallel runs. Test files
// whose docblock carries `@serial` (they bound a process's latency or memory, or they load the whole machine:
// the built service under measurement, a million-row table, the generator's build and type-check) never run
// two at a time; each runs beside at most `maxWorkers - 1` other files. They start first, one after the other;
// the other files fill the remaining workers in Jest's order (the slowest first, from its timing cache).
// `--runInBand` runs everything in this process, as Jest's runner does.
//
// Plain JavaScript, loaded by Jest outside its transform. Jest's runner and worker pool are resolved through
// the `jest` package, whose own dependencies they are.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const fromJest = createRequire(createRequire(import.meta.url).resolve('jest'));
const fromCore = createRequire(fromJest.resolve('@jest/core'));
const runnerModule = fromCore.resolve('jest-runner');
const fromRunner = createRequire(runnerModule);
const { default: JestRunner, EmittingTestRunner } = fromRunner(runnerModule);
const { Worker } = fromRunner('jest-worker');
const Emittery = fromRunner('emittery');
const TEST_WORKER = fromRunner.resolve('./testWorker');

const SERIAL_TAG = /^\s*\*\s*@serial\b/m;
const serialFiles = new Map();
/** Whether the file's docblock says `@serial`. */
export function isSerial(path) {
  if (!serialFiles.has(path)) serialFiles.set(path, SERIAL_TAG.test(readFileSync(path, 'utf8')));
  return serialFiles.get(path);
}

/**
 * Picks the next test to start: the first in Jest's order that may start now (a `@serial` file only while no
 * other `@serial` file runs). Exported for its unit test.
 */
export function nextTest(queue, serialRunning, serial = (test) => isSerial(test.path)) {
  return queue.findIndex((test) => !(serialRunning && serial(test)));
}

export default class TestRunner extends EmittingTestRunner {
  #events = new Emittery();
  #inBand;

  constructor(globalConfig, context, options) {
    super(globalConfig, context, options);
    this.#inBand = new JestRunner(globalConfig, context, options);
  }

  on(eventName, listener) {
    const off = [this.#events.on(eventName, listener), this.#inBand.on(eventName, listener)];
    return () => off.forEach((unsubscribe) => unsubscribe());
  }

  async runTests(tests, watcher, options) {
    if (options.serial) return this.#inBand.runTests(tests, watcher, options);
    return this.#runInWorkers(tests, watcher);
  }

  /** jest-runner's parallel run, with its own dispatch instead of a plain concurrency limit. */
  async #runInWorkers(tests, watcher) {
    const config = this._globalConfig;
    const resolvers = new Map();
    for (const test of tests) {
      if (!resolvers.has(test.context.config.id)) {
        resolvers.set(test.context.config.id, {
          config: test.context.config,
          serializableModuleMap: test.context.moduleMap.toJSON(),
        });
      }
    }
    const worker = new Worker(TEST_WORKER, {
      enableWorkerThreads: config.workerThreads,
      exposedMethods: ['worker'],
      forkOptions: { serialization: 'json', stdio: 'pipe' },
      idleMemoryLimit:
        typeof config.workerIdleMemoryLimit === 'number' ? config.workerIdleMemoryLimit : undefined,
      maxRetries: 3,
      numWorkers: config.maxWorkers,
      setupArgs: [{ serializableResolvers: [...resolvers.values()] }],
      workerGracefulExitTimeout: config.workerGracefulExitTimeout,
    });
    worker.getStdout()?.pipe(process.stdout);
    worker.getStderr()?.pipe(process.stderr);

    const runOne = async (test) => {
      await this.#events.emit('test-file-start', [test]);
      const promise = worker.worker({
        config: test.context.config,
        context: {
          ...this._context,
          changedFiles: this._context.changedFiles && [...this._context.changedFiles],
          sourcesRelatedToTestsInChangedFiles: this._context.sourcesRelatedToTestsInChangedFiles && [
            ...this._context.sourcesRelatedToTestsInChangedFiles,
          ],
        },
        globalConfig: config,
        path: test.path,
      });
      promise.UNSTABLE_onCustomMessage?.(([event, payload]) => this.#events.emit(event, payload));
      return promise;
    };

    // The `@serial` files first: one after the other they are the longest chain of the run, so they start at
    // once (also on a first run, when Jest has no timings and orders files by size).
    const queue = [
      ...tests.filter((test) => isSerial(test.path)),
      ...tests.filter((test) => !isSerial(test.path)),
    ];
    let running = 0;
    let serialRunning = false;
    try {
      await new Promise((resolve) => {
        const dispatch = () => {
          while (running < config.maxWorkers && !watcher.isInterrupted()) {
            const index = nextTest(queue, serialRunning);
            if (index < 0) break;
            const [test] = queue.splice(index, 1);
            const serial = isSerial(test.path);
            running++;
            if (serial) serialRunning = true;
            runOne(test)
              .then(
                (result) => this.#events.emit('test-file-success', [test, result]),
                (error) => this.#events.emit('test-file-failure', [test, error]),
              )
              .finally(() => {
                running--;
                if (serial) serialRunning = false;
                dispatch();
              });
          }
          if (running === 0 && (queue.length === 0 || watcher.isInterrupted())) resolve();
        };
        dispatch();
      });
    } finally {
      const { forceExited } = await worker.end();
      if (forceExited) {
        process.stderr.write(
          'A worker process has failed to exit gracefully and has been force exited: a test left something ' +
            'running (run with --detectOpenHandles to find it).\n',
        );
      }
    }
  }
}
