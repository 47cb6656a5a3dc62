import { boardView, canReveal, tileKey } from './board';

describe('boardView', () => {
  it('hides everything before and during a game except the gems found', () => {
    const tiles = boardView({ revealed: ['0,1', '4,4'], mines: [], hit: null, over: false });
    expect(tiles).toHaveLength(25);
    expect(tiles.filter((t) => t.state === 'gem').map((t) => t.key)).toEqual(['0,1', '4,4']);
    expect(tiles.filter((t) => t.state === 'hidden')).toHaveLength(23);
    expect(tiles[6]).toMatchObject({ row: 1, col: 1, key: '1,1' });
  });

  it('shows every mine and the unfound gems once the game is over', () => {
    const tiles = boardView({ revealed: ['0,0'], mines: ['3,3', '3,0', '1,0'], hit: '3,3', over: true });
    const byKey = new Map(tiles.map((t) => [t.key, t]));
    expect(byKey.get('3,3')).toMatchObject({ state: 'mine', hit: true });
    expect(byKey.get('1,0')).toMatchObject({ state: 'mine', hit: false });
    expect(byKey.get('0,0')).toMatchObject({ state: 'gem', found: true });
    expect(byKey.get('2,2')).toMatchObject({ state: 'gem', found: false });
    expect(tiles.filter((t) => t.state === 'mine')).toHaveLength(3);
  });
});

describe('canReveal', () => {
  const tiles = boardView({ revealed: ['0,1'], mines: [], hit: null, over: false });
  const hidden = tiles[0]!;
  const gem = tiles[1]!;

  it('allows hidden tiles of an active game with nothing pending', () => {
    expect(tileKey(0, 0)).toBe(hidden.key);
    expect(canReveal({ active: true, pending: false, tile: hidden })).toBe(true);
    expect(canReveal({ active: true, pending: true, tile: hidden })).toBe(false);
    expect(canReveal({ active: false, pending: false, tile: hidden })).toBe(false);
    expect(canReveal({ active: true, pending: false, tile: gem })).toBe(false);
  });
});
