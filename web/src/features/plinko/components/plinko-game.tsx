import { useCallback, useRef, useState, type SubmitEvent } from 'react';
import { GameLayout } from '@/components/layouts/game-frame';
import { BetAmountField } from '@/components/ui/bet-amount-field';
import { Button } from '@/components/ui/button';
import { SliderField } from '@/components/ui/slider-field';
import { Stat } from '@/components/ui/stat';
import { ToggleGroup } from '@/components/ui/toggle-group';
import { PLINKO_MAX_ROWS, PLINKO_MIN_ROWS, PLINKO_RISKS, type PlinkoRisk } from '@/config/plinko-multipliers';
import { useBetInput } from '@/hooks/use-bet-input';
import { useAutobet, type AutobetResult } from '@/hooks/use-autobet';
import { useBetHotkeys } from '@/hooks/use-hotkeys';
import { BetModeTabs } from '@/components/ui/bet-mode-tabs';
import { Hotkeys } from '@/components/ui/hotkeys-panel';
import { betRefusal } from '@/lib/bet';
import { useBetReveals } from '@/lib/bet-reveals';
import { toast } from '@/lib/toast';
import { capitalize, formatMoney } from '@/lib/format';
import { usePlayPlinko, type PlayPlinkoResult } from '../api/play-plinko';
import { pathFromDecisions } from '../utils/path';
import { PlinkoBoard, type PlinkoBoardHandle } from './plinko-board';
import styles from './plinko.module.css';

const RISK_OPTIONS = PLINKO_RISKS.map((value) => ({ value, label: capitalize(value) }));
const DEFAULT_ROWS = 8;
/** PLINKO_AUTO_SPEED is how much faster autobet's balls fall: each still lands, and shows its win, before the next. */
const PLINKO_AUTO_SPEED = 3;

interface Totals {
  dropped: number;
  winnings: number;
  lastWin: number;
}

const noTotals: Totals = { dropped: 0, winnings: 0, lastWin: 0 };

/**
 * PlinkoGame drops balls through the pins (SPEC.md §2, §4 Plinko). A response
 * takes the stake from the balance at once; the ball then falls, and only when
 * it lands do the balance, Last Win and Total Winnings show its win
 * (lib/bet-reveals), so the result keeps its suspense. Failures are only logged.
 */
export function PlinkoGame() {
  const { betText, setBetText, takeBet } = useBetInput();
  const [rows, setRows] = useState(DEFAULT_ROWS);
  const [risk, setRisk] = useState<PlinkoRisk>('medium');
  const [totals, setTotals] = useState<Totals>(noTotals);
  const [inFlight, setInFlight] = useState(0);
  const [landed, setLanded] = useState<{ bucket: number; seq: number } | null>(null);
  const [ready, setReady] = useState(false);
  const board = useRef<PlinkoBoardHandle | null>(null);
  const launches = useRef(0);
  const play = usePlayPlinko();
  const reveals = useBetReveals('plinko');

  const attachBoard = useCallback((handle: PlinkoBoardHandle | null) => {
    board.current = handle;
    setReady(handle !== null);
  }, []);

  /**
   * drop places one bet and launches its ball; it resolves with the result when the ball lands (the balance, Last
   * Win and Total Winnings show then) and rejects when the bet fails. speed > 1 drops faster (autobet).
   */
  const drop = async (bet: number, speed = 1): Promise<PlayPlinkoResult> => {
    const droppedRows = rows;
    const res = await play.mutateAsync({ betAmount: bet, rows: droppedRows, risk });
    const ticket = reveals.arrive({
      newBalance: res.newBalance,
      settles: { betId: res.betId, amount: bet, multiplier: res.multiplier, payout: res.winAmount },
    });
    const handle = board.current;
    if (!handle) {
      reveals.reveal(ticket);
      return res;
    }
    const seq = ++launches.current;
    setTotals((t) => ({ ...t, dropped: t.dropped + 1 }));
    setInFlight((n) => n + 1);
    await new Promise<void>((resolve) => {
      handle.launch(
        pathFromDecisions(res.decisions, res.finalBucket, droppedRows),
        () => {
          reveals.reveal(ticket);
          setInFlight((n) => Math.max(0, n - 1));
          setTotals((t) => ({ ...t, winnings: t.winnings + res.winAmount, lastWin: res.winAmount }));
          setLanded({ bucket: res.finalBucket, seq });
          resolve();
        },
        speed,
      );
    });
    return res;
  };

  const autobet = useAutobet({
    game: 'plinko',
    placeBet: async (amount): Promise<AutobetResult> => {
      const res = await drop(amount, PLINKO_AUTO_SPEED);
      return { stake: amount, payout: res.winAmount };
    },
  });

  const dropManual = () => {
    if (play.isPending || !board.current || autobet.running) return;
    // The login prompt every game gives; Plinko makes no other client check (SPEC.md §5).
    const bet = takeBet({ signInOnly: true });
    if (bet === null) return;
    drop(bet).catch((err: unknown) => {
      // A refusal (a limit, the balance) is an answer, not a failure to log.
      if (betRefusal(err) === null) console.error('plinko: drop failed', err);
      // SPEC.md §8: a failed drop is only logged; a stake the server
      // refuses (below the minimum, say) still says why.
      const refusal = betRefusal(err);
      if (refusal) toast.error(refusal);
    });
  };

  const onDrop = (event: SubmitEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (autobet.mode === 'manual') {
      dropManual();
      return;
    }
    if (play.isPending || !board.current || autobet.running) return;
    const bet = takeBet({ signInOnly: true });
    if (bet !== null) autobet.start(bet);
  };

  const onReset = () => {
    // Balls cleared in flight never land: their results show now.
    reveals.revealAll();
    board.current?.clear();
    launches.current++;
    setInFlight(0);
    setLanded(null);
    setTotals(noTotals);
  };

  const boardLocked = inFlight > 0 || play.isPending || autobet.running;
  const hotkeys = useBetHotkeys({
    bet: dropManual,
    betLabel: 'Drop a ball (Manual tab)',
    betText,
    setBetText,
    betDisabled: play.isPending || !ready || autobet.running || autobet.mode !== 'manual',
    amountDisabled: play.isPending || autobet.running,
  });
  const controls = (
    <form className={styles.controls} onSubmit={onDrop} noValidate aria-label="Plinko bet">
      <BetModeTabs
        autobet={autobet}
        startDisabled={boardLocked || !ready}
        manual={
          <Button type="submit" className={styles.play} disabled={play.isPending || !ready} data-primary-action>
            {play.isPending ? 'Dropping...' : 'Drop Ball'}
          </Button>
        }
      >
        <BetAmountField value={betText} onChange={setBetText} disabled={play.isPending || autobet.running} />
        <SliderField
          label="Rows"
          value={rows}
          min={PLINKO_MIN_ROWS}
          max={PLINKO_MAX_ROWS}
          step={1}
          onChange={setRows}
          disabled={boardLocked}
          valueText={`${rows} rows`}
        />
        <ToggleGroup label="Risk Level" options={RISK_OPTIONS} value={risk} onChange={setRisk} disabled={boardLocked} />
      </BetModeTabs>
      <Stat label="Last Win">{formatMoney(totals.lastWin)}</Stat>
      <Hotkeys keys={hotkeys} />
    </form>
  );

  return (
    <GameLayout controls={controls}>
      <PlinkoBoard ref={attachBoard} rows={rows} risk={risk} landed={landed} />
      <section className={styles.results} aria-label="Results">
        <Stat label="Balls Dropped">{totals.dropped}</Stat>
        <Stat label="Total Winnings">{formatMoney(totals.winnings)}</Stat>
        <Button variant="secondary" disabled={totals.dropped === 0 || autobet.running} onClick={onReset}>
          Reset
        </Button>
      </section>
    </GameLayout>
  );
}
