import { dropCitusDatabase } from '../../dist/database/citus-cluster.js';
import { adminQuery, state } from './global-setup.js';

export default async function globalTeardown() {
  const s = state.__e2eDatabase;
  if (!s?.admin) return;
  if (s.stop) {
    // The throwaway cluster deletes its data directory when stopped.
    await s.stop();
    return;
  }
  // On a shared server (TEST_DATABASE_URL) remove the template; each test file drops its own database.
  if (s.engine === 'citus') await dropCitusDatabase(s.admin, s.template);
  else await adminQuery(s.admin, `DROP DATABASE IF EXISTS "${s.template}" WITH (FORCE)`);
}
