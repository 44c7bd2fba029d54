// Loaded into the built service by the tests (`node --import …/report-listening.mjs dist/main.js`), which start it
// on port 0 (a port the system chooses while binding, so no other process can take it in between): appends the
// port of every TCP server of the process, once it listens, to the file LISTEN_REPORT_FILE names.
import { appendFileSync } from 'node:fs';
import net from 'node:net';

const file = process.env.LISTEN_REPORT_FILE;
if (file) {
  const listen = net.Server.prototype.listen;
  net.Server.prototype.listen = function (...args) {
    this.once('listening', () => {
      const address = this.address();
      try {
        if (address && typeof address === 'object') appendFileSync(file, `${address.port}\n`);
      } catch {
        // The test has its port and removed the file: a later server is none of its business.
      }
    });
    return listen.apply(this, args);
  };
}
