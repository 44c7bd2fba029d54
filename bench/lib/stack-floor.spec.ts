import { formatStackFloorTable, roundOrder, type FloorSide, summarize } from './stack-floor.js';

const side = (cpuMsPerRequest: number, rps: number, errors = 0): FloorSide => ({
  rps,
  p99: 10,
  errors,
  requests: rps * 10,
  cpuMsPerRequest,
  v8CpuMsPerRequest: cpuMsPerRequest / 10,
});

describe('stack floor', () => {
  it('rotates the fronts so that each goes first, second, third and last once in four rounds', () => {
    const rounds = [0, 1, 2, 3].map(roundOrder);
    expect(rounds).toEqual([
      ['node', 'express', 'nest', 'nest-logged'],
      ['express', 'nest', 'nest-logged', 'node'],
      ['nest', 'nest-logged', 'node', 'express'],
      ['nest-logged', 'node', 'express', 'nest'],
    ]);
    for (const position of [0, 1, 2, 3]) expect(new Set(rounds.map((r) => r[position])).size).toBe(4);
    expect(roundOrder(4)).toEqual(roundOrder(0));
  });

  it('divides the means of the rounds by node:http’s, CPU and requests per second alike', () => {
    const result = summarize('organization-retrieve', [
      {
        order: roundOrder(0),
        fronts: {
          node: side(0.2, 1000),
          express: side(0.26, 800),
          nest: side(0.36, 600),
          'nest-logged': side(0.4, 500),
        },
      },
      {
        order: roundOrder(1),
        fronts: {
          node: side(0.3, 600),
          express: side(0.34, 500, 1),
          nest: side(0.44, 400),
          'nest-logged': side(0.5, 300),
        },
      },
    ]);
    expect(result.fronts.node.cpuMsPerRequest).toBeCloseTo(0.25);
    expect(result.fronts.nest.cpuMsPerRequest).toBeCloseTo(0.4);
    expect(result.cpuRatio).toEqual({ express: 1.2, nest: 1.6, 'nest-logged': 1.8 });
    expect(result.rpsRatio).toEqual({ express: 0.81, nest: 0.63, 'nest-logged': 0.5 });
    expect(result.fronts.express.errors).toBe(1);
    expect(result.fronts.express.requests).toBe(13_000);
  });

  it('gives a ratio of 0, not Infinity, when node:http measured nothing', () => {
    const result = summarize('x', [
      {
        order: roundOrder(0),
        fronts: {
          node: side(0, 0),
          express: side(0.2, 10),
          nest: side(0.3, 10),
          'nest-logged': side(0.4, 10),
        },
      },
    ]);
    expect(result.cpuRatio).toEqual({ express: 0, nest: 0, 'nest-logged': 0 });
  });

  it('writes one row per scenario with every front’s CPU, the ratios and the errors of all four', () => {
    const result = summarize('recording-retrieve', [
      {
        order: roundOrder(0),
        fronts: {
          node: side(0.5, 900),
          express: side(0.6, 800, 2),
          nest: side(0.8, 700, 1),
          'nest-logged': side(0.9, 600, 4),
        },
      },
    ]);
    const table = formatStackFloorTable([result]).split('\n');
    expect(table.at(-1)).toBe(
      '| recording-retrieve | 0.5 | 0.6 | 0.8 (0.08) | 0.9 | 1.2 | 1.6 | 1.8 | 0.78 | 0.67 | 7 |',
    );
  });
});
