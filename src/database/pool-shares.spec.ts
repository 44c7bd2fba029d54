import { describe, expect, it } from '@jest/globals';
import { ApiError } from '../common/errors/api-error.js';
import {
  currentApiRequest,
  PoolShares,
  runAsApiRequest,
  runAsKeyLookup,
  runOutsideApiRequest,
} from './pool-shares.js';

type Release = (err?: unknown) => void;
interface Client {
  id: number;
  sent: string[];
  release?: Release;
  query(text: string): Promise<unknown>;
}

/** A pool of `size` clients that records each client's statements and hands them out as node-postgres does. */
function fakePool(size: number) {
  const idle: Client[] = Array.from({ length: size }, (_, i) => {
    const client: Client = {
      id: i,
      sent: [],
      query(text: string) {
        client.sent.push(text);
        return Promise.resolve();
      },
    };
    return client;
  });
  const pool = {
    connect(callback: (err: unknown, client?: Client, release?: Release) => void) {
      const client = idle.shift();
      if (!client) {
        callback(new Error('fake pool exhausted'));
        return;
      }
      client.release = () => {
        if (!idle.includes(client)) idle.push(client);
      };
      callback(undefined, client, client.release);
    },
  };
  return { pool, idle };
}

function checkout(pool: { connect: (cb: never) => void }): Promise<{ client: Client; release: Release }> {
  return new Promise((resolve, reject) => {
    (pool.connect as (cb: (err: unknown, client?: Client, release?: Release) => void) => void)(
      (err, client, release) => (err ? reject(err) : resolve({ client: client!, release: release! })),
    );
  });
}

const settings = { apiShare: 2, waitMs: 200, baseTimeoutMs: 30000, timeoutMs: { read: 2000, write: 5000 } };

describe('PoolShares', () => {
  it('gives each checkout the statement timeout of its kind, sending SET only when it changes', async () => {
    const { pool } = fakePool(1);
    new PoolShares(settings).install(pool);
    const plain = await checkout(pool);
    expect(plain.client.sent).toEqual([]);
    plain.release();
    const read = await runAsApiRequest('read', () => checkout(pool));
    expect(read.client.sent).toEqual(['SET statement_timeout = 2000']);
    read.release();
    const again = await runAsApiRequest('read', () => checkout(pool));
    expect(again.client.sent).toHaveLength(1);
    again.release();
    const write = await runAsApiRequest('write', () => checkout(pool));
    expect(write.client.sent.at(-1)).toBe('SET statement_timeout = 5000');
    write.release();
    const back = await checkout(pool);
    expect(back.client.sent.at(-1)).toBe('SET statement_timeout = 30000');
  });

  it('lets the key lookup keep a timeout up to the base one, so lookup and read alternate without a SET', async () => {
    const { pool } = fakePool(1);
    new PoolShares(settings).install(pool);
    // A request: the guard's lookup, then the handler's read, twice on the one connection.
    for (let i = 0; i < 2; i++) {
      const lookup = await runAsKeyLookup(() => checkout(pool));
      lookup.release();
      const read = await runAsApiRequest('read', () => checkout(pool));
      read.release();
    }
    const sent = (await runAsKeyLookup(() => checkout(pool))).client.sent;
    // Only the first read set its timeout; the lookups kept it (2 s ≤ the base 30 s).
    expect(sent).toEqual(['SET statement_timeout = 2000']);
  });

  it('gives the key lookup the base timeout over a longer one or none, and other work its own as before', async () => {
    const longer = { ...settings, baseTimeoutMs: 1000, timeoutMs: { read: 2000, write: 0 } };
    const { pool } = fakePool(1);
    new PoolShares(longer).install(pool);
    const read = await runAsApiRequest('read', () => checkout(pool));
    read.release();
    // 2 s is past the base 1 s: the lookup gets the base one.
    const lookup = await runAsKeyLookup(() => checkout(pool));
    expect(lookup.client.sent).toEqual(['SET statement_timeout = 2000', 'SET statement_timeout = 1000']);
    lookup.release();
    const write = await runAsApiRequest('write', () => checkout(pool));
    write.release();
    // A write runs with none (0): the lookup after it gets the base one, and so does capture after a read.
    const again = await runAsKeyLookup(() => checkout(pool));
    expect(again.client.sent.slice(2)).toEqual(['SET statement_timeout = 0', 'SET statement_timeout = 1000']);
    again.release();
    const read2 = await runAsApiRequest('read', () => checkout(pool));
    read2.release();
    const plain = await checkout(pool);
    expect(plain.client.sent.slice(4)).toEqual([
      'SET statement_timeout = 2000',
      'SET statement_timeout = 1000',
    ]);
    plain.release();
    // Outside a lookup nothing is lenient: with a read's shorter timeout left, capture gets the base one back.
    const { pool: pool2 } = fakePool(1);
    new PoolShares(settings).install(pool2);
    (await runAsApiRequest('read', () => checkout(pool2))).release();
    expect((await checkout(pool2)).client.sent).toEqual([
      'SET statement_timeout = 2000',
      'SET statement_timeout = 30000',
    ]);
  });

  it('lets /api checkouts hold at most the share; the rest of the pool stays for everything else', async () => {
    const { pool } = fakePool(4);
    const shares = new PoolShares(settings);
    shares.install(pool);
    const first = await runAsApiRequest('read', () => checkout(pool));
    await runAsApiRequest('write', () => checkout(pool));
    expect(shares.apiInUse).toBe(2);
    let third: { client: Client } | null = null;
    const waiting = runAsApiRequest('read', () => checkout(pool)).then((c) => (third = c));
    await new Promise((r) => setImmediate(r));
    expect(third).toBeNull();
    // Capture and other work still get the remaining connections.
    await checkout(pool);
    await checkout(pool);
    // Given back through `client.release`, as the pool's own `query` does: the waiting checkout gets the slot.
    first.client.release!();
    await waiting;
    expect(third).not.toBeNull();
    expect(shares.apiInUse).toBe(2);
  });

  it('takes connections background work holds for long from the share, never below one', async () => {
    const { pool } = fakePool(6);
    const shares = new PoolShares({ ...settings, apiShare: 3 });
    shares.install(pool);
    shares.holdOutsideApi(2);
    expect(shares.apiShare).toBe(1);
    await runAsApiRequest('read', () => checkout(pool));
    let second: { client: Client } | null = null;
    // Awaited below: left alone, its refusal at the wait's end would reject unhandled in whatever test file the
    // worker runs next.
    const waiting = runAsApiRequest('read', () => checkout(pool)).then((c) => (second = c));
    await new Promise((r) => setImmediate(r));
    expect([second, shares.apiInUse, shares.apiWaiting]).toEqual([null, 1, 1]);
    shares.holdOutsideApi(5);
    expect(shares.apiShare).toBe(1);
    // Nothing gives the one slot back: the waiting checkout is refused at the end of its wait.
    expect(((await waiting.catch((e: unknown) => e)) as ApiError).getStatus()).toBe(503);
    expect(shares.apiWaiting).toBe(0);
  });

  it('answers 503 `unavailable` when the share stays busy past the wait', async () => {
    const { pool } = fakePool(4);
    new PoolShares({ ...settings, apiShare: 1, waitMs: 20 }).install(pool);
    await runAsApiRequest('read', () => checkout(pool));
    const refused = await runAsApiRequest('read', () => checkout(pool)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).getStatus()).toBe(503);
    expect((refused as ApiError).body.code).toBe('unavailable');
  });

  it('gives a slot back once when the release is called twice, and on a failed checkout', async () => {
    const { pool } = fakePool(1);
    const shares = new PoolShares(settings);
    shares.install(pool);
    const held = await runAsApiRequest('read', () => checkout(pool));
    held.release();
    held.release();
    expect(shares.apiInUse).toBe(0);
    await runAsApiRequest('read', () => checkout(pool));
    await expect(runAsApiRequest('read', () => checkout(pool))).rejects.toThrow('fake pool exhausted');
    expect(shares.apiInUse).toBe(1);
  });
});

describe('runOutsideApiRequest', () => {
  it('runs background work a request starts outside that request, also what it starts later', async () => {
    const seen = await runAsApiRequest('write', async () => {
      const inside = currentApiRequest();
      const outside = await runOutsideApiRequest(async () => {
        await new Promise((resolve) => setImmediate(resolve));
        return currentApiRequest();
      });
      return { inside, outside, after: currentApiRequest() };
    });
    expect(seen).toEqual({ inside: 'write', outside: null, after: 'write' });
  });
});
