import {
  KENO_DRAWN,
  KENO_MAX_PICKS,
  KENO_MIN_PICKS,
  KENO_NUMBERS,
  KENO_PAYOUTS,
  KENO_RISKS,
  PLINKO_MAX_ROWS,
  PLINKO_MIN_ROWS,
  PLINKO_MULTIPLIERS,
  PLINKO_RISKS,
  PUMP_DIFFICULTIES,
  PUMP_MULTIPLIERS,
  PUMP_POPS,
  PUMP_POSITIONS,
} from './game-tables';

/** The parts of games.json the web app's tables come from. */
interface GamesJson {
  plinko: Record<string, Record<string, number[]>>;
  keno_board: { numbers: number; drawn: number; min_picks: number; max_picks: number; risks: string[] };
  keno: Record<string, Record<string, number[]>>;
  pump: { positions: number; pops: Record<string, number>; multipliers: Record<string, number[]> };
}

// The project's copy of reference/games.json, which the Go games' tests read too
// (a glob, so the app's type check does not need a file outside web/).
const files = import.meta.glob<GamesJson>('../../../internal/games/testdata/games.json', {
  eager: true,
  import: 'default',
});
const games = Object.values(files)[0]!;

describe('the tables generated from games.json', () => {
  it('read games.json', () => {
    expect(Object.keys(files)).toHaveLength(1);
  });

  it('hold its Plinko tables', () => {
    expect(PLINKO_RISKS).toEqual(Object.keys(games.plinko));
    expect(PLINKO_MULTIPLIERS).toStrictEqual(games.plinko);
    for (const risk of PLINKO_RISKS) {
      expect(Object.keys(PLINKO_MULTIPLIERS[risk]).map(Number)).toEqual(
        Array.from({ length: PLINKO_MAX_ROWS - PLINKO_MIN_ROWS + 1 }, (_, i) => PLINKO_MIN_ROWS + i),
      );
    }
  });

  it('hold its Keno board and tables', () => {
    const board = games.keno_board;
    expect([KENO_NUMBERS, KENO_DRAWN, KENO_MIN_PICKS, KENO_MAX_PICKS]).toEqual([
      board.numbers,
      board.drawn,
      board.min_picks,
      board.max_picks,
    ]);
    expect(KENO_RISKS).toEqual(board.risks);
    expect(KENO_PAYOUTS).toStrictEqual(games.keno);
  });

  it('hold its Pump tables', () => {
    expect(PUMP_POSITIONS).toBe(games.pump.positions);
    expect(PUMP_DIFFICULTIES).toEqual(Object.keys(games.pump.multipliers));
    expect(PUMP_POPS).toStrictEqual(games.pump.pops);
    expect(PUMP_MULTIPLIERS).toStrictEqual(games.pump.multipliers);
  });
});
