import { CliUsageError, positiveInt, required } from '../../common/cli/cli-args.js';
import type { CliCommand } from '../../common/feature/feature.js';

/** `demo`: generated sessions ingested through the capture service, as if posthog-js had sent them. */
export const DEMO_COMMAND: CliCommand = {
  name: 'demo',
  summary: 'Fill a project with generated session recordings',
  synopsis: '--project ID [--sessions N] [--seed S]',
  options: {
    project: { type: 'string', help: 'the project (its id) that receives the recordings' },
    sessions: { type: 'string', help: 'how many sessions to generate (1-1000, default 20)' },
    seed: {
      type: 'string',
      help: 'a number that makes the generated content reproducible (default: random)',
    },
  },
  description:
    'Generates realistic browser sessions (page loads, clicks, typing, scrolling, console messages, idle time) of a\n' +
    'few persons and ingests them through the capture code, as if posthog-js had sent them to POST /s/. Session ids\n' +
    'are new on every run, so running it again adds more recordings.',
  validate(values, command) {
    positiveInt({ project: required(values, 'project', command) }, 'project', command, 2147483647);
    positiveInt(values, 'sessions', command, 1000);
    positiveInt(values, 'seed', command, 2147483647);
  },
  async run({ values, command, out, withModules }) {
    const projectId = positiveInt(
      { project: required(values, 'project', command) },
      'project',
      command,
      2147483647,
    )!;
    const sessions = positiveInt(values, 'sessions', command, 1000) ?? 20;
    const seed = positiveInt(values, 'seed', command, 2147483647);
    const [
      { ProjectsModule },
      { ProjectsService },
      { IngestModule },
      { IngestPipeline },
      { SessionRecordingsModule },
      { demoCaptureRequests },
    ] = await Promise.all([
      import('../../projects/projects.module.js'),
      import('../../projects/projects.service.js'),
      import('../../ingest/ingest.module.js'),
      import('../../ingest/ingest-pipeline.js'),
      import('../session-recordings.module.js'),
      import('./demo-sessions.js'),
    ]);
    const modules = [ProjectsModule, IngestModule, SessionRecordingsModule];
    const line = await withModules(modules, async (app) => {
      const project = await app.get(ProjectsService).findById(projectId);
      if (!project) throw new CliUsageError(`demo: no project with id ${projectId}`);
      const pipeline = app.get(IngestPipeline);
      const requests = demoCaptureRequests({ token: project.apiToken, sessions, now: Date.now(), seed });
      let stored = 0;
      for (const body of requests) {
        const results = await pipeline.captureJson(body, {
          endpoint: 'recordings',
          now: new Date(),
          ip: null,
        });
        stored += (results.get('recordings') as { stored: number } | undefined)?.stored ?? 0;
      }
      return (
        `created ${sessions} recordings (${stored} rrweb events, ${requests.length} capture requests) in project ` +
        `${project.id} "${project.name}"; list them: GET /api/projects/${project.id}/session_recordings/`
      );
    });
    out(line);
    return 0;
  },
};
