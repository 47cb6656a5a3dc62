import { formatBucket, normalizeDecisions, pathDuration, pathFromDecisions, pointAt } from './path';

function randomDecisions(rows: number, random: () => number): number[] {
  return Array.from({ length: rows }, () => (random() < 0.5 ? 0 : 1));
}

// A small deterministic generator, so failures reproduce.
function lcg(seed: number) {
  let s = seed;
  return () => {
    s = (s * 1664525 + 1013904223) % 2 ** 32;
    return s / 2 ** 32;
  };
}

describe('pathFromDecisions', () => {
  it('walks the pins and ends in the bucket the decisions count', () => {
    const points = pathFromDecisions([1, 1, 0, 1, 1, 1, 1, 1], 7, 8);
    expect(points).toHaveLength(10);
    expect(points[0]).toEqual({ x: 0, y: -1 });
    expect(points[1]).toEqual({ x: 0, y: 0 });
    expect(points[2]).toEqual({ x: 0.5, y: 1 });
    expect(points.at(-1)).toEqual({ x: 7 - 4, y: 8 });
  });

  it('ends in finalBucket every time, for every row count', () => {
    const random = lcg(42);
    for (let rows = 8; rows <= 16; rows++) {
      for (let n = 0; n < 200; n++) {
        const decisions = randomDecisions(rows, random);
        const bucket = decisions.reduce((a, b) => a + b, 0);
        const points = pathFromDecisions(decisions, bucket, rows);
        expect(points).toHaveLength(rows + 2);
        expect(points.at(-1)).toEqual({ x: bucket - rows / 2, y: rows });
        // Each row moves the ball half a spacing left or right.
        for (let i = 2; i < points.length; i++) expect(Math.abs(points[i]!.x - points[i - 1]!.x)).toBe(0.5);
      }
    }
  });

  it('still ends in finalBucket when the decisions disagree with it', () => {
    expect(pathFromDecisions([0, 0, 0, 0, 0, 0, 0, 0], 3, 8).at(-1)).toEqual({ x: -1, y: 8 });
    expect(pathFromDecisions([1, 1, 1, 1, 1, 1, 1, 1], 0, 8).at(-1)).toEqual({ x: -4, y: 8 });
    expect(pathFromDecisions([1, 0], 5, 8).at(-1)).toEqual({ x: 1, y: 8 });
    expect(normalizeDecisions([1, 1, 1, 1, 1, 1, 1, 1], 6, 8)).toEqual([1, 1, 1, 1, 1, 1, 0, 0]);
    expect(normalizeDecisions([0, 1, 0], 9, 3)).toEqual([1, 1, 1]);
  });
});

describe('pointAt', () => {
  it('takes 150 ms per path point and stops in the bucket', () => {
    const points = pathFromDecisions([0, 1, 1, 0, 0, 1, 0, 1], 4, 8);
    expect(pathDuration(points)).toBe(9 * 150);
    expect(pointAt(points, 0)).toEqual({ x: 0, y: -1 });
    expect(pointAt(points, 150)).toEqual({ x: 0, y: 0 });
    expect(pointAt(points, 300).x).toBeCloseTo(-0.5);
    expect(pointAt(points, 300).y).toBeCloseTo(1);
    expect(pointAt(points, 10_000)).toEqual({ x: 0, y: 8 });
  });
});

describe('formatBucket', () => {
  it('shows 1000 and more in thousands with a k', () => {
    expect(formatBucket(1000)).toBe('1k');
    expect(formatBucket(5.6)).toBe('5.6');
    expect(formatBucket(130)).toBe('130');
    expect(formatBucket(0.2)).toBe('0.2');
  });
});
