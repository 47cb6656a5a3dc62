import { useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useRef, useState } from 'react';
import { userQueryKey, type User } from '@/lib/auth';
import { betRefusal, GENERIC_ERROR, PLAY_MESSAGES } from '@/lib/bet';
import {
  beforeBet,
  fromCents,
  loadSettings,
  saveSettings,
  settle,
  startState,
  stopMessage,
  toCents,
  type AutobetSettings,
  type StopReason,
} from '@/lib/autobet';

/** AutobetResult is a settled bet as a game reports it: its stake and its payout, in dollars. */
export interface AutobetResult {
  stake: number;
  payout: number;
}

export interface AutobetProgress {
  count: number;
  /** bets is the run's count limit, 0 for none. */
  bets: number;
  net: number;
}

export interface UseAutobetOptions {
  /** game keys the settings in localStorage. */
  game: string;
  /**
   * placeBet places one ordinary bet through the game's own mutation and resolves once its result is shown (the
   * balance display included); it rejects when the bet fails. It is called with one bet in flight at a time.
   */
  placeBet: (amount: number) => Promise<AutobetResult>;
}

export type BetMode = 'manual' | 'auto';

export interface Autobet {
  /** mode is the controls' tab: the manual play button or the autobet fields. */
  mode: BetMode;
  setMode: (mode: BetMode) => void;
  settings: AutobetSettings;
  setSettings: (settings: AutobetSettings) => void;
  running: boolean;
  progress: AutobetProgress | null;
  /** message says why the last run ended. */
  message: string | null;
  stopReason: StopReason | null;
  start: (baseAmount: number) => void;
  stop: () => void;
}

/**
 * useAutobet runs a game's autobet: one ordinary bet at a time through placeBet, each waited for, with the engine
 * of utils/autobet deciding the next amount or the stop. stop() takes effect at once: no request is sent after it
 * (a bet already in flight completes and is counted). Unmounting (leaving the page) stops the run. A hidden tab
 * keeps it going: the bets are the player's and each one still waits for its result.
 */
export function useAutobet({ game, placeBet }: UseAutobetOptions): Autobet {
  const queryClient = useQueryClient();
  const [settings, setSettingsState] = useState(() => loadSettings(game));
  const [mode, setMode] = useState<BetMode>('manual');
  const [running, setRunning] = useState(false);
  const [progress, setProgress] = useState<AutobetProgress | null>(null);
  const [stopReason, setStopReason] = useState<StopReason | null>(null);
  const run = useRef<{ stopped: boolean } | null>(null);
  const mounted = useRef(true);
  const latest = useRef({ placeBet, settings });
  useEffect(() => {
    latest.current = { placeBet, settings };
  });

  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
      if (run.current) run.current.stopped = true;
    };
  }, []);

  const setSettings = useCallback(
    (next: AutobetSettings) => {
      setSettingsState(next);
      latest.current = { ...latest.current, settings: next };
      saveSettings(game, next);
    },
    [game],
  );

  const stop = useCallback(() => {
    if (run.current) run.current.stopped = true;
  }, []);

  const start = useCallback(
    (baseAmount: number) => {
      if (run.current) return;
      const token = { stopped: false };
      run.current = token;
      const rules = latest.current.settings;
      let state = startState(baseAmount);
      setRunning(true);
      setStopReason(null);
      setProgress({ count: 0, bets: rules.bets, net: 0 });
      const loop = async (): Promise<StopReason> => {
        for (;;) {
          if (token.stopped) return { kind: 'stopped' };
          const { placeBet: place } = latest.current;
          // The balance shown now (the cache, not a render's copy): the last bet's result has been revealed.
          const funds = queryClient.getQueryData<User | null>(userQueryKey)?.balance;
          if (funds === undefined) return { kind: 'refused', message: PLAY_MESSAGES.login };
          if (state.betCents <= 0) return { kind: 'refused', message: PLAY_MESSAGES.invalidBet };
          const refused = beforeBet(rules, state, funds);
          if (refused) return refused;
          let result: AutobetResult;
          try {
            result = await place(fromCents(state.betCents));
          } catch (err) {
            return { kind: 'refused', message: betRefusal(err) ?? GENERIC_ERROR };
          }
          const step = settle(rules, state, { stakeCents: toCents(result.stake), payoutCents: toCents(result.payout) });
          state = step.state;
          if (mounted.current) setProgress({ count: state.count, bets: rules.bets, net: fromCents(state.netCents) });
          if (step.stop) return step.stop;
        }
      };
      void loop().then((reason) => {
        run.current = null;
        if (!mounted.current) return;
        setStopReason(reason);
        setRunning(false);
      });
    },
    [queryClient],
  );

  return {
    mode,
    setMode,
    settings,
    setSettings,
    running,
    progress,
    message: stopReason ? stopMessage(stopReason) : null,
    stopReason,
    start,
    stop,
  };
}
