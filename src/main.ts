import { exitOnOldNode } from './node-version.js';

/**
 * The service's entry point (`node dist/main.js`, what `npm start` runs). It checks the Node.js version before
 * loading the application (server.ts), so an older Node fails with one line saying what to type instead.
 */
exitOnOldNode('service', '`npm start`');
await import('./server.js');
