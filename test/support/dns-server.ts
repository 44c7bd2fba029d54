import dgram from 'node:dgram';
import { Packet, type Resource, UDPServer } from 'dns2';

const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3 } as const;

/**
 * A real authoritative-style DNS server (dns2, UDP) on 127.0.0.1 and a random port, serving the zone the test
 * sets. Names are matched case-insensitively; a name it was not told about is NXDOMAIN.
 */
export interface TestDnsServer {
  /** `ip:port`, for DNS_SERVERS. */
  readonly address: string;
  readonly port: number;
  /** Names asked, lower-cased, in order. */
  readonly queries: string[];
  /**
   * Serves TXT records for `name`: each record is a string or its character strings (chunks), which a resolver
   * returns separately. An empty list makes the name exist without TXT records (NODATA).
   */
  setTxt(name: string, records: (string | string[])[]): void;
  /** Answers every query for `name` with SERVFAIL. */
  fail(name: string): void;
  /** Forgets `name` (NXDOMAIN again). */
  remove(name: string): void;
  close(): Promise<void>;
}

type Entry = { kind: 'txt'; records: string[][] } | { kind: 'fail' };

export async function startDnsServer(): Promise<TestDnsServer> {
  const zone = new Map<string, Entry>();
  const queries: string[] = [];
  const server = new UDPServer((request, send) => {
    const response = Packet.createResponseFromRequest(request);
    const [question] = request.questions;
    const name = question.name.toLowerCase();
    queries.push(name);
    const entry = zone.get(name);
    if (!entry) {
      response.header.rcode = RCODE.NXDOMAIN;
    } else if (entry.kind === 'fail') {
      response.header.rcode = RCODE.SERVFAIL;
    } else if (question.type === Packet.TYPE.TXT) {
      for (const data of entry.records) {
        response.answers.push({
          name: question.name,
          type: Packet.TYPE.TXT,
          class: Packet.CLASS.IN,
          ttl: 1,
          data,
        } as Resource); // toBuffer is added by the encoder
      }
    }
    void send(response);
  });
  await server.listen(0, '127.0.0.1');
  const { port } = server.address();
  return {
    address: `127.0.0.1:${port}`,
    port,
    queries,
    setTxt: (name, records) =>
      zone.set(name.toLowerCase(), {
        kind: 'txt',
        records: records.map((r) => (Array.isArray(r) ? r : [r])),
      }),
    fail: (name) => zone.set(name.toLowerCase(), { kind: 'fail' }),
    remove: (name) => zone.delete(name.toLowerCase()),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A UDP socket on 127.0.0.1 that receives queries and never answers (a resolver times out on it). */
export async function startSilentUdpPort(): Promise<{
  address: string;
  received: () => number;
  close(): Promise<void>;
}> {
  const socket = dgram.createSocket('udp4');
  let received = 0;
  socket.on('message', () => received++);
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    received: () => received,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

/** A loopback UDP port with nothing bound to it (queries are refused: ICMP port unreachable). */
export async function closedUdpPort(): Promise<string> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return `127.0.0.1:${port}`;
}
