import {
  bytesToFloat,
  cardAt,
  diceRoll,
  floats,
  minesMultiplier,
  mismatches,
  recompute,
  sample,
  sha256Hex,
} from './provably-fair';

const seeds = (nonce: number) => ({ serverSeed: 'server seed', clientSeed: 'client seed', nonce });

describe('the float stream', () => {
  it('reproduces the published vector', async () => {
    const fs = await floats('some server seed', 'some client seed', 1, 4);
    expect(fs).toEqual([0.5919261889066547, 0.81884371698834, 0.17176169087179005, 0.277875404804945]);
  });

  it('reads 4 bytes per float', () => {
    expect(bytesToFloat(new Uint8Array([151, 136, 121, 135]), 0)).toBe(0.5919261889066547);
    expect(bytesToFloat(new Uint8Array([0, 0, 0, 0, 255, 255, 255, 255]), 4)).toBeLessThan(1);
  });

  it('moves on to the next HMAC round after 8 floats', async () => {
    const fs = await floats('server seed', 'client seed', 1, 20);
    expect(fs).toHaveLength(20);
    expect(new Set(fs).size).toBe(20);
    expect((await floats('server seed', 'client seed', 1, 9))[8]).toBe(fs[8]);
  });

  it('hashes the server seed as the commitment', async () => {
    expect(await sha256Hex('server seed')).toBe('a4e53dc2f480b8fce6fe688b1317658b446299df23ad533394406427c8c19557');
  });
});

describe('game events', () => {
  it('rolls the dice vectors', async () => {
    const [first = 0] = await floats('server seed', 'client seed', 1, 1);
    const [second = 0] = await floats('server seed', 'client seed', 2, 1);
    expect(diceRoll(first)).toBe(74.67);
    expect(diceRoll(second)).toBe(53.86);
  });

  it('draws the keno vector', async () => {
    const v = await recompute('keno', seeds(1), { picks: [30, 26, 1], risk: 'classic' });
    expect(v.outcome).toEqual({
      drawnNumbers: [30, 26, 10, 37, 22, 35, 25, 24, 39, 4],
      matches: [30, 26],
      multiplier: 3.1,
    });
  });

  it('drops the plinko vectors into buckets 7, 2 and 5', async () => {
    const buckets = [];
    for (const nonce of [1, 2, 3]) {
      const v = await recompute('plinko', seeds(nonce), { rows: 8, risk: 'medium' });
      buckets.push(v.outcome.finalBucket);
    }
    expect(buckets).toEqual([7, 2, 5]);
    expect((await recompute('plinko', seeds(1), { rows: 8, risk: 'medium' })).outcome.multiplier).toBe(3);
  });

  it('places the mines vector on tiles 18, 15 and 5', async () => {
    const v = await recompute('mines', seeds(1), { mines: 3 });
    expect(v.outcome).toEqual({ mineTiles: [18, 15, 5] });
    expect(v.lines[0]).toEqual(['Mines', '3,3  3,0  1,0']);
    expect((await recompute('mines', seeds(1), { mines: 3, reveals: [0, 1] })).outcome).toMatchObject({
      status: 'won',
      multiplier: 1.29,
    });
    expect((await recompute('mines', seeds(1), { mines: 3, reveals: [0, 18] })).outcome).toMatchObject({
      status: 'lost',
      multiplier: 0,
    });
  });

  it('replays the pump vector', async () => {
    const pump = {
      serverSeed: '564e967b90f03d0153fdcb2d2d1cc5a5057e0df78163611fe3801d6498e681ca',
      clientSeed: 'zXv1upuFns',
      nonce: 5663,
    };
    const v = await recompute('pump', pump, { difficulty: 'expert' });
    expect(v.outcome).toEqual({ pops: [16, 25, 20, 13, 15, 14, 23, 18, 19, 17], burstAt: 13, safePumps: 12 });
    expect((await recompute('pump', pump, { difficulty: 'expert', pumps: 3 })).outcome).toMatchObject({
      status: 'won',
      multiplier: 4.95,
    });
    expect((await recompute('pump', pump, { difficulty: 'expert', pumps: 13 })).outcome).toMatchObject({
      status: 'burst',
      multiplier: 0,
    });
  });

  it('deals the blackjack vector', async () => {
    const [a = 0, b = 0, c = 0, d = 0] = await floats('server seed', 'client seed', 1, 4);
    expect([a, b, c, d].map((f) => cardAt(f).label)).toEqual(['J♠', '10♥', '5♥', 'K♣']);
    const v = await recompute('blackjack', seeds(1), { actions: 's' });
    expect(v.outcome).toMatchObject({
      player: 'J♠ 5♥ (15)',
      dealer: '10♥ K♣ (20)',
      result: 'Dealer wins',
      multiplier: 0,
    });
  });

  // The split rules' vectors: the recorded outcomes are what the server's games.Replay writes
  // (internal/games/verify_test.go has the same seeds), so the browser must match them field by field.
  it.each([
    {
      nonce: 5,
      params: { actions: 'psd', rules: 1 },
      recorded: {
        player: '8♦ Q♦ (18)',
        dealer: '6♦ 6♣ 2♣ 8♣ (22)',
        result: 'Hand 1: Dealer busts! You win. Hand 2: Bust! Dealer wins',
        stakes: 3,
        multiplier: 0.6666,
        rules: 1,
        second: '8♠ 8♣ K♣ (26)',
        return: 2,
      },
    },
    {
      nonce: 26,
      params: { actions: 'i', rules: 1 },
      recorded: {
        player: 'A♦ 9♥ (20, soft)',
        dealer: 'A♦ J♦ (21, soft)',
        result: 'Dealer has Blackjack! Dealer wins. Insurance pays 2:1',
        stakes: 1.5,
        multiplier: 1,
        rules: 1,
        insurance: 'taken',
        return: 1.5,
      },
    },
    {
      nonce: 53,
      params: { actions: 'npss', rules: 1 },
      recorded: {
        player: '8♦ 4♦ (12)',
        dealer: 'A♥ 9♣ (20, soft)',
        result: 'Hand 1: Dealer wins. Hand 2: Dealer wins',
        stakes: 2,
        multiplier: 0,
        rules: 1,
        second: '8♣ 10♥ (18)',
        insurance: 'declined',
      },
    },
    {
      nonce: 26,
      params: {},
      recorded: {
        player: 'A♦ 9♥ (20, soft)',
        dealer: 'A♦ J♦ (21, soft)',
        result: 'Dealer has Blackjack! Dealer wins',
        stakes: 1,
        multiplier: 0,
      },
    },
  ])(
    'replays blackjack nonce $nonce with $params.actions as the server records it',
    async ({ nonce, params, recorded }) => {
      const v = await recompute('blackjack', seeds(nonce), params);
      expect(mismatches(v.outcome, recorded)).toEqual([]);
      expect(Object.keys(v.outcome).sort()).toEqual(Object.keys(recorded).sort());
    },
  );

  it('refuses blackjack actions the rules do not allow', async () => {
    await expect(recompute('blackjack', seeds(5), { actions: 'p' })).rejects.toThrow('Split is not allowed now');
    await expect(recompute('blackjack', seeds(26), { actions: 's', rules: 1 })).rejects.toThrow(
      'Accept or decline insurance first',
    );
    await expect(recompute('blackjack', seeds(1), { actions: 'ss' })).rejects.toThrow('Game is already over');
  });

  it('verifies a dice bet', async () => {
    const v = await recompute('dice', seeds(1), { target: '80' });
    expect(v.outcome).toEqual({ roll: 74.67, win: true, multiplier: 1.24 });
    expect(mismatches(v.outcome, { roll: 74.67, target: 80, win: true, multiplier: 1.24 })).toEqual([]);
    expect(mismatches(v.outcome, { roll: 74.68, win: true, multiplier: 1.24 })).toEqual(['roll']);
  });
});

describe('helpers', () => {
  it('samples without replacement from the ascending pool', () => {
    expect(sample([0, 0, 0], 5, 3)).toEqual([0, 1, 2]);
    expect(sample([0.99, 0.99], 5, 2)).toEqual([4, 3]);
  });

  it('computes the mines multipliers with ties rounded down', () => {
    expect(minesMultiplier(3, 0)).toBe(1);
    expect(minesMultiplier(3, 1)).toBe(1.12); // 1.125, a tie, rounds down
    expect(minesMultiplier(3, 2)).toBe(1.29);
    expect(minesMultiplier(1, 1)).toBe(1.03);
  });
});
