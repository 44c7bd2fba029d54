/** A server could not listen because its port is taken; the message names the setting to change. */
export class PortInUseError extends Error {
  constructor(
    readonly setting: string,
    readonly port: number,
    host: string,
  ) {
    super(
      `Port ${port} (${host}) is already in use by another process. Stop that process, or set ${setting} ` +
        `to a free port (for example ${setting}=${port + 1}).`,
    );
    this.name = 'PortInUseError';
  }
}

/** `err` as a PortInUseError when it is Node's EADDRINUSE, else unchanged. */
export function explainListenError(err: unknown, setting: string, port: number, host: string): unknown {
  return (err as NodeJS.ErrnoException | null)?.code === 'EADDRINUSE'
    ? new PortInUseError(setting, port, host)
    : err;
}
