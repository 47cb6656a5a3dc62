import { screen, within } from '@testing-library/react';
import { devConfig, json, mockApi, setCsrfCookie, type Handler } from '@/testing/mock-api';
import { player, renderApp, signIn } from '@/testing/test-utils';
import { parseLimit, restriction } from './responsible-gambling';
import { formatDuration, nextReminder } from './reality-check';

const usage = [
  { period: 'day', wagered: 12.5, netLoss: 4, resetsAt: '2026-11-25T00:00:00Z' },
  { period: 'week', wagered: 40, netLoss: -3, resetsAt: '2026-11-30T00:00:00Z' },
  { period: 'month', wagered: 90, netLoss: 10, resetsAt: '2026-12-01T00:00:00Z' },
];
const none = {
  loss: {},
  wager: {},
  pending: null,
  excludedPermanently: false,
  realityCheckMinutes: 0,
  usage,
  canBet: true,
};

function api(extra: Record<string, Handler>) {
  setCsrfCookie();
  signIn();
  return mockApi({
    'GET /api/auth/config': devConfig,
    'GET /api/auth/user': () => json({ user: player }),
    ...extra,
  });
}

async function openPanel() {
  const app = renderApp('/settings?tab=limits');
  const panel = (await screen.findByRole('heading', { name: 'Responsible Gambling' })).closest('section');
  if (!panel) throw new Error('no panel');
  return { ...app, panel };
}

describe('Responsible gambling settings', () => {
  it('shows what was played, checks limits before sending, and saves the whole set', async () => {
    let saved: unknown = null;
    const server = api({
      'GET /api/limits': () => json({ limits: none }),
      'POST /api/limits': ({ body }) => {
        saved = body;
        return json({
          limits: {
            ...none,
            loss: { day: 50 },
            pending: { loss: { day: 50 }, wager: { week: 100 }, from: '2026-11-25T15:00:00Z' },
            realityCheckMinutes: 30,
          },
        });
      },
    });
    const { panel, user } = await openPanel();
    expect(await within(panel).findByText('Net loss this day: 4.00')).toBeInTheDocument();
    expect(within(panel).getByText('Wagered this week: 40.00')).toBeInTheDocument();

    await user.type(within(panel).getByLabelText('Daily loss limit'), '12.345');
    await user.click(within(panel).getByRole('button', { name: 'Save Limits' }));
    expect(within(panel).getByRole('alert')).toHaveTextContent(
      'A limit is an amount of at least 0.01 with at most two decimal places',
    );
    expect(server.calls('POST /api/limits')).toHaveLength(0);

    await user.clear(within(panel).getByLabelText('Daily loss limit'));
    await user.type(within(panel).getByLabelText('Daily loss limit'), '50');
    await user.type(within(panel).getByLabelText('Weekly wager limit'), '100');
    await user.selectOptions(within(panel).getByLabelText('Reality check'), '30');
    await user.click(within(panel).getByRole('button', { name: 'Save Limits' }));
    expect(await within(panel).findByRole('status')).toHaveTextContent('The looser limits above apply from');
    expect(saved).toEqual({ loss: { day: 50 }, wager: { week: 100 }, realityCheckMinutes: 30 });
  });

  it('asks before a break, and shows it once it runs', async () => {
    let limits: object = none;
    const server = api({
      'GET /api/limits': () => json({ limits }),
      'POST /api/limits/break': ({ body }) => {
        expect(body).toEqual({ days: 7 });
        limits = { ...none, breakUntil: '2026-12-01T15:00:00Z', canBet: false };
        return json({ limits });
      },
    });
    const { panel, user } = await openPanel();
    await user.selectOptions(await within(panel).findByLabelText('Break length'), '7');
    await user.click(within(panel).getByRole('button', { name: 'Take a Break' }));
    const dialog = await screen.findByRole('dialog', { name: 'Take a 1 week break?' });
    expect(server.calls('POST /api/limits/break')).toHaveLength(0);
    await user.click(within(dialog).getByRole('button', { name: 'Start the Break' }));
    expect(await within(panel).findByText(/You are taking a break from betting until/)).toBeInTheDocument();
    expect(server.calls('POST /api/limits/break')).toHaveLength(1);
  });

  it('asks for the password before a self-exclusion', async () => {
    let limits: object = none;
    const server = api({
      'GET /api/limits': () => json({ limits }),
      'POST /api/limits/self-exclusion': ({ body }) => {
        const { password } = body as { password: string };
        if (password !== 'secret123') return json({ message: 'Current password is incorrect' }, 400);
        limits = { ...none, excludedPermanently: true, canBet: false };
        return json({ limits });
      },
    });
    const { panel, user, queryClient } = await openPanel();
    await user.selectOptions(await within(panel).findByLabelText('Exclude me for'), 'permanent');
    await user.click(within(panel).getByRole('button', { name: 'Exclude Me' }));
    const dialog = await screen.findByRole('dialog', { name: 'Exclude yourself permanently?' });
    await user.click(within(dialog).getByRole('button', { name: 'Exclude Me' }));
    expect(within(dialog).getByRole('alert')).toHaveTextContent('Current password is required');
    expect(server.calls('POST /api/limits/self-exclusion')).toHaveLength(0);
    await user.type(within(dialog).getByLabelText('Current password'), 'guess');
    await user.click(within(dialog).getByRole('button', { name: 'Exclude Me' }));
    expect(await within(dialog).findByRole('alert')).toHaveTextContent('Current password is incorrect');
    await user.clear(within(dialog).getByLabelText('Current password'));
    await user.type(within(dialog).getByLabelText('Current password'), 'secret123');
    await user.click(within(dialog).getByRole('button', { name: 'Exclude Me' }));
    expect(await within(panel).findByText(/You have excluded yourself from betting permanently/)).toBeInTheDocument();
    expect(server.calls('POST /api/limits/self-exclusion').map((c) => c.body)).toEqual([
      { duration: 'permanent', password: 'guess' },
      { duration: 'permanent', password: 'secret123' },
    ]);
    // Nothing keeps the password once it was answered: TanStack Query held each request's variables.
    await vi.waitFor(() => {
      expect(
        JSON.stringify(
          queryClient
            .getMutationCache()
            .getAll()
            .map((m) => m.state.variables),
        ),
      ).not.toMatch(/secret123|guess/);
    });
  });
});

describe('Reality check', () => {
  it('reminds a player whose reminder is due of their time and result, and lets them go on', async () => {
    const signedInAt = new Date(Date.now() - 45 * 60_000).toISOString();
    api({
      'GET /api/limits': () => json({ limits: { ...none, realityCheckMinutes: 30 } }),
      'GET /api/limits/reality-check': () => json({ signedInAt, bets: 3, wagered: 12, net: -4.5 }),
    });
    const { user } = renderApp('/');
    const dialog = await screen.findByRole('dialog', { name: 'Reality Check' });
    expect(dialog).toHaveAccessibleDescription('You have been signed in for 45 min.');
    expect(within(dialog).getByText(/3 bets, \$12\.00 wagered/)).toBeInTheDocument();
    await user.click(within(dialog).getByRole('button', { name: 'Keep Playing' }));
    expect(screen.queryByRole('dialog', { name: 'Reality Check' })).not.toBeInTheDocument();
  });
});

describe('limit rules in the browser', () => {
  it('parses limits like the server', () => {
    expect(parseLimit('')).toBeUndefined();
    expect(parseLimit(' 10 ')).toBe(10);
    expect(parseLimit('0.01')).toBe(0.01);
    expect(parseLimit('0')).toBeNull();
    expect(parseLimit('1.001')).toBeNull();
    expect(parseLimit('-5')).toBeNull();
    expect(parseLimit('abc')).toBeNull();
  });

  it('says why betting is stopped', () => {
    expect(restriction(none)).toBeNull();
    expect(restriction({ ...none, excludedPermanently: true })).toBe(
      'You have excluded yourself from betting permanently.',
    );
    expect(restriction({ ...none, breakUntil: '2026-12-01T15:00:00Z' })).toMatch(/^You are taking a break/);
  });

  it('reminds every interval from sign-in, once each, and at once for a missed one', () => {
    const start = Date.parse('2026-11-24T10:00:00Z');
    const min = 60_000;
    expect(nextReminder(start, 30, 0, start + 5 * min)).toBe(start + 30 * min);
    expect(nextReminder(start, 30, 1, start + 31 * min)).toBe(start + 60 * min);
    expect(nextReminder(start, 30, 1, start + 95 * min)).toBe(start + 90 * min);
    expect(formatDuration(45)).toBe('45 min');
    expect(formatDuration(60)).toBe('1 h');
    expect(formatDuration(125.9)).toBe('2 h 5 min');
  });
});
