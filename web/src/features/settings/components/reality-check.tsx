import { useQuery } from '@tanstack/react-query';
import { lazy, Suspense, useEffect, useState } from 'react';
import { useUser } from '@/lib/auth';
import { fetchRealityCheck, useLimits, type RealityCheck } from '../api/limits';

// The dialog (and Radix Dialog with it) is its own chunk: every page has the reminder,
// few ever show it, so it stays out of the first load. Its chunk is fetched with the
// session's figures, just before it is shown.
const loadDialog = () => import('./reality-check-dialog');
const RealityCheckDialog = lazy(loadDialog);

const MINUTE = 60_000;

/** formatDuration writes minutes as "45 min", "1 h", "2 h 5 min". */
export function formatDuration(minutes: number): string {
  const m = Math.max(0, Math.floor(minutes));
  const h = Math.floor(m / 60);
  const rest = m % 60;
  if (h === 0) return `${rest} min`;
  return rest === 0 ? `${h} h` : `${h} h ${rest} min`;
}

/**
 * nextReminder is the time (ms) of the first reminder after the acknowledged one: every interval minutes from
 * sign-in, so a reload neither repeats a reminder nor resets the count.
 */
export function nextReminder(signedInAt: number, intervalMinutes: number, acknowledged: number, now: number): number {
  const step = intervalMinutes * MINUTE;
  // A reminder missed while the app was closed shows at once.
  const due = Math.floor((now - signedInAt) / step);
  return signedInAt + Math.max(acknowledged + 1, due) * step;
}

const ackKey = (signedInAt: string) => `fairplay.realityCheck.${signedInAt}`;

/**
 * RealityCheckReminder shows, every N minutes of a signed-in session (N from the player's responsible-gambling
 * settings), how long they have played and their net result since signing in, with a way to stop.
 */
export function RealityCheckReminder() {
  const user = useUser();
  const signedIn = Boolean(user.data);
  const limits = useLimits(signedIn);
  const interval = signedIn ? (limits.data?.realityCheckMinutes ?? 0) : 0;
  const session = useQuery({
    queryKey: ['account', 'reality-check', 'session'],
    queryFn: fetchRealityCheck,
    enabled: interval > 0,
    staleTime: Infinity,
    retry: false,
  });
  const [shown, setShown] = useState<{ check: RealityCheck; at: number } | null>(null);
  const signedInAt = session.data?.signedInAt;

  useEffect(() => {
    if (!signedInAt || interval <= 0 || shown) return;
    const start = Date.parse(signedInAt);
    const acknowledged = Number(sessionStorage.getItem(ackKey(signedInAt)) ?? '0');
    const at = nextReminder(start, interval, acknowledged, Date.now());
    const timer = window.setTimeout(
      () => {
        void Promise.all([fetchRealityCheck(), loadDialog()])
          .then(([rc]) => {
            sessionStorage.setItem(ackKey(signedInAt), String(Math.floor((Date.now() - start) / (interval * MINUTE))));
            setShown({ check: rc, at: Date.now() });
          })
          .catch(() => undefined);
      },
      Math.max(0, at - Date.now()),
    );
    return () => {
      window.clearTimeout(timer);
    };
  }, [signedInAt, interval, shown]);

  if (!shown) return null;
  return (
    <Suspense fallback={null}>
      <RealityCheckDialog
        check={shown.check}
        signedInFor={formatDuration((shown.at - Date.parse(shown.check.signedInAt)) / MINUTE)}
        onClose={() => {
          setShown(null);
        }}
      />
    </Suspense>
  );
}
