import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { onSomePort, sleep } from './service-process.js';

/** A Redis a test can make hang: it keeps its connections open but stops answering until resumed. */
export interface PausableRedis {
  url: string;
  /** How it hangs: a SIGSTOPped redis-server of its own, or a proxy that stops forwarding. */
  kind: string;
  pause(): void;
  resume(): void;
  close(): Promise<void>;
}

const hasRedisServer = () => spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;

/** Why a pausable Redis cannot be had here, or null when `startPausableRedis` will return one. */
export function pausableRedisUnavailable(): string | null {
  return hasRedisServer() || process.env.REDIS_URL
    ? null
    : 'no redis-server on PATH and REDIS_URL is not set';
}

/**
 * A `redis-server` of the test's own on a free loopback port (paused with SIGSTOP) when the binary is installed;
 * else a loopback TCP proxy to REDIS_URL that stops forwarding while paused; null when neither is available.
 */
export async function startPausableRedis(): Promise<PausableRedis | null> {
  if (hasRedisServer()) return spawnRedisServer();
  const target = process.env.REDIS_URL;
  return target ? startPausableProxy(new URL(target)) : null;
}

async function spawnRedisServer(): Promise<PausableRedis> {
  // redis-server cannot bind port 0 and report it: some port is picked, and another one if some other process
  // took it before redis-server bound it (redis-server then exits at once).
  return onSomePort(async (port) => {
    const child: ChildProcess = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    if (await redisUp(child, port)) return pausableServer(child, port);
    const exited = child.exitCode !== null;
    child.kill('SIGKILL');
    throw new Error(exited ? `redis-server could not bind port ${port}` : 'redis-server did not start');
  });
}

/** Whether redis-server answers on `port` (false once it has exited, or after 10 s). */
async function redisUp(child: ChildProcess, port: number): Promise<boolean> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
      socket.once('data', (d: Buffer) => {
        socket.destroy();
        resolve(d.toString().startsWith('+PONG'));
      });
      socket.on('error', () => resolve(false));
    });
    // A redis-server that could not bind exits within moments: still running then, the answer was its own.
    if (up) await sleep(100);
    if (up && child.exitCode === null) return true;
    if (child.exitCode !== null || Date.now() > deadline) return false;
    await sleep(50);
  }
}

function pausableServer(child: ChildProcess, port: number): PausableRedis {
  return {
    url: `redis://127.0.0.1:${port}`,
    kind: `redis-server on port ${port}, paused with SIGSTOP`,
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    close: async () => {
      child.kill('SIGCONT');
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
    },
  };
}

async function startPausableProxy(target: URL): Promise<PausableRedis> {
  let paused = false;
  const pairs = new Set<[Socket, Socket]>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    client.pipe(upstream);
    upstream.pipe(client);
    if (paused) for (const s of pair) s.pause();
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const url = new URL(target.href);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.href,
    kind: `proxy to ${target.host} that stops forwarding`,
    pause: () => {
      paused = true;
      for (const pair of pairs) for (const s of pair) s.pause();
    },
    resume: () => {
      paused = false;
      for (const pair of pairs) for (const s of pair) s.resume();
    },
    close: async () => {
      for (const pair of pairs) for (const s of pair) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
