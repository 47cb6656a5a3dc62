import { balloonSize, potentialWin } from './balloon';

describe('balloonSize', () => {
  it.each([
    [0, 50],
    [1, 55],
    [4, 70],
    [10, 100],
    [11, 100],
    [24, 100],
  ])('after %s pumps is %s px', (pumps, px) => {
    expect(balloonSize(pumps)).toBe(px);
  });
});

describe('potentialWin', () => {
  it('is the stake times the multiplier', () => {
    expect(potentialWin(2, 1.27)).toBeCloseTo(2.54);
    expect(potentialWin(1, 1)).toBe(1);
  });
});
