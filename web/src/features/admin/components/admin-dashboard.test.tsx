import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import {
  deferred,
  devConfig,
  json,
  mockApi,
  setCsrfCookie,
  type Handler,
  type RecordedRequest,
} from '@/testing/mock-api';
import { admin, renderApp, signIn } from '@/testing/test-utils';
import { SEARCH_DEBOUNCE_MS } from './user-list';

const bob = {
  _id: 'u-bob',
  username: 'bob',
  email: 'bob@example.com',
  balance: 2500.5,
  isAdmin: false,
  hideUsername: false,
  createdAt: '2026-01-15T10:00:00Z',
};
const carol = { ...bob, _id: 'u-carol', username: 'carol', email: 'carol@example.com', balance: 10, isAdmin: true };

const userStats = {
  totalUsers: 1234,
  usersLastMonth: 40,
  usersLastMonthPercentChange: 33.333,
  usersLastWeek: 5,
  usersLastWeekPercentChange: -50,
};

/** sentRequestIds are the request ids of the balance adjustments sent, in order. */
function sentRequestIds(server: ReturnType<typeof mockApi>) {
  return server.calls('PATCH /api/auth/users/u-bob/balance').map((c) => (c.body as { requestId: string }).requestId);
}

function query(req: RecordedRequest) {
  return Object.fromEntries(new URL(req.url, 'http://localhost').searchParams);
}

function api(extra: Record<string, Handler> = {}) {
  setCsrfCookie();
  signIn(admin);
  return mockApi({
    'GET /api/auth/config': devConfig,
    'GET /api/auth/user': () => json({ user: admin }),
    'GET /api/auth/stats/users': () => json(userStats),
    'GET /api/auth/users': (req) => json({ users: query(req).page === '2' ? [carol] : [bob], totalPages: 2 }),
    'GET /api/auth/users/search': () => json({ users: [bob], totalPages: 1 }),
    ...extra,
  });
}

async function openDashboard() {
  const app = renderApp('/admin');
  await screen.findByRole('heading', { name: 'Admin Dashboard' });
  return app;
}

describe('Statistics', () => {
  it('shows user statistics with one-decimal signed changes', async () => {
    api();
    await openDashboard();
    const panel = await screen.findByRole('tabpanel', { name: 'Users' });
    expect(await within(panel).findByText('1,234')).toBeInTheDocument();
    expect(within(panel).getByText('Total Users')).toBeInTheDocument();
    expect(within(panel).getByText('Users Past Month')).toBeInTheDocument();
    expect(within(panel).getByText('+33.3% vs previous month')).toBeInTheDocument();
    expect(within(panel).getByText('Users Past Week')).toBeInTheDocument();
    expect(within(panel).getByText('-50.0% vs previous week')).toBeInTheDocument();
  });

  it('falls back to "Failed to load user statistics"', async () => {
    api({ 'GET /api/auth/stats/users': () => new Response(null, { status: 500 }) });
    await openDashboard();
    expect(await screen.findByText('Failed to load user statistics')).toBeInTheDocument();
  });

  it('loads the Money tab once, on first opening, with a spinner meanwhile', async () => {
    const release = deferred<Response>();
    const server = api({ 'GET /api/auth/stats/wagering': () => release.promise });
    const { user } = await openDashboard();
    await screen.findByText('1,234');
    expect(server.calls('GET /api/auth/stats/wagering')).toHaveLength(0);

    await user.click(screen.getByRole('tab', { name: 'Money' }));
    expect(await within(screen.getByRole('tabpanel', { name: 'Money' })).findByRole('status')).toHaveTextContent(
      'Loading wagering statistics',
    );
    release.resolve(
      json({
        totalWagered: 123456.78,
        wageredLastMonth: 1000,
        wageredLastMonthPercentChange: 12.25,
        wageredLastWeek: 250.5,
        wageredLastWeekPercentChange: 0,
      }),
    );
    const panel = screen.getByRole('tabpanel', { name: 'Money' });
    expect(await within(panel).findByText('$123,456.78')).toBeInTheDocument();
    expect(within(panel).getByText('Wagered Past Month')).toBeInTheDocument();
    expect(within(panel).getByText('+12.3% vs previous month')).toBeInTheDocument();
    expect(within(panel).getByText('$250.50')).toBeInTheDocument();
    expect(within(panel).getByText('0.0% vs previous week')).toBeInTheDocument();

    await user.click(screen.getByRole('tab', { name: 'Users' }));
    await user.click(screen.getByRole('tab', { name: 'Money' }));
    expect(await screen.findByText('$123,456.78')).toBeInTheDocument();
    expect(server.calls('GET /api/auth/stats/wagering')).toHaveLength(1);
  });

  it('shows the wagering error fallback', async () => {
    api({ 'GET /api/auth/stats/wagering': () => json({}, 500) });
    const { user } = await openDashboard();
    await user.click(screen.getByRole('tab', { name: 'Money' }));
    expect(await screen.findByText('Failed to load wagering statistics')).toBeInTheDocument();
  });

  it('shows the last 24 hours per game on the Activity tab', async () => {
    api({
      'GET /api/auth/stats/activity': () =>
        json({
          games: [{ game: 'dice', bets: 1200, wagered: 5000, paidOut: 4950.25, rtp: 99.006, theoreticalRtp: 98.99 }],
          activePlayers: 42,
        }),
    });
    const { user } = await openDashboard();
    await user.click(screen.getByRole('tab', { name: 'Activity' }));
    const table = await screen.findByRole('table', { name: /activity per game/i });
    const row = within(table).getByRole('row', { name: /dice/i });
    expect(
      within(row)
        .getAllByRole('cell')
        .map((c) => c.textContent),
    ).toEqual(['1,200', '$5,000.00', '$4,950.25', '99.01%', '98.99%']);
    expect(screen.getByText(/Active players \(last 15 minutes\)/)).toHaveTextContent('42');
  });
});

describe('User list', () => {
  it('lists users with every column and pages through them', async () => {
    const server = api();
    const { user } = await openDashboard();
    const table = await screen.findByRole('table', { name: 'Users' });
    expect(
      within(table)
        .getAllByRole('columnheader')
        .map((h) => h.textContent),
    ).toEqual(['Username', 'Email', 'Balance', 'Admin', 'Created', 'Actions']);
    const row = within(table).getByRole('row', { name: /bob/ });
    expect(
      within(row)
        .getAllByRole('cell')
        .map((c) => c.textContent),
    ).toEqual(['bob', 'bob@example.com', '$2,500.50', 'No', new Date(bob.createdAt).toLocaleDateString(), 'Manage']);
    expect(query(server.calls('GET /api/auth/users')[0]!)).toEqual({ page: '1', limit: '10' });

    expect(screen.getByText('Page 1 of 2')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Previous' })).toBeDisabled();
    await user.click(screen.getByRole('button', { name: 'Next' }));
    expect(await screen.findByText('carol')).toBeInTheDocument();
    expect(screen.getByText('Page 2 of 2')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Next' })).toBeDisabled();
    expect(within(screen.getByRole('row', { name: /carol/ })).getByText('Yes')).toBeInTheDocument();
    expect(query(server.calls('GET /api/auth/users')[1]!)).toEqual({ page: '2', limit: '10' });
  });

  it('searches after the typing stops, and clears back to the full list', async () => {
    const server = api();
    const { user } = await openDashboard();
    await screen.findByRole('table', { name: 'Users' });
    const search = screen.getByPlaceholderText('Search by username or email');
    // Three keystrokes in one synchronous run: no timer can fire between them
    // however slow the machine, so only the debounce decides what is sent.
    for (const typed of ['b', 'bo', 'bob']) fireEvent.change(search, { target: { value: typed } });
    expect(server.calls('GET /api/auth/users/search')).toHaveLength(0);
    // The pager reads "Search results: Page 1 of 1" as soon as the search
    // starts loading (no page count yet), possibly before its request is
    // sent: wait for the request, then for its answer.
    await waitFor(() => {
      expect(server.calls('GET /api/auth/users/search')).toHaveLength(1);
    });
    expect(await screen.findByText('Search results: Page 1 of 1')).toBeInTheDocument();
    const searches = server.calls('GET /api/auth/users/search');
    expect(searches).toHaveLength(1);
    expect(query(searches[0]!)).toEqual({ query: 'bob', page: '1', limit: '10' });
    expect(SEARCH_DEBOUNCE_MS).toBe(500);

    await user.click(screen.getByRole('button', { name: 'Clear search and show all users' }));
    expect(search).toHaveValue('');
    expect(await screen.findByText('Page 1 of 2')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Clear search and show all users' })).not.toBeInTheDocument();
  });

  it('has empty states for the list and for a search', async () => {
    const server = api({
      'GET /api/auth/users': () => json({ users: [], totalPages: 0 }),
      'GET /api/auth/users/search': () => json({ users: [], totalPages: 0 }),
    });
    const { user } = await openDashboard();
    expect(await screen.findByText('No users found.')).toBeInTheDocument();
    await user.type(screen.getByPlaceholderText('Search by username or email'), 'zed');
    expect(await screen.findByText('No users found matching your search.')).toBeInTheDocument();
    expect(server.calls('GET /api/auth/users/search')).toHaveLength(1);
  });

  it('reports load, search and authentication errors', async () => {
    const server = api({
      'GET /api/auth/users': () => json({}, 500),
      'GET /api/auth/users/search': () => json({ message: 'Search is down' }, 503),
    });
    const { user, unmount } = await openDashboard();
    expect(await screen.findByText('Failed to load users')).toBeInTheDocument();
    await user.type(screen.getByPlaceholderText('Search by username or email'), 'x');
    expect(await screen.findByText('Search is down')).toBeInTheDocument();
    unmount();

    // Still 401 after a successful refresh and retry.
    server.on('GET /api/auth/users', () => json({ message: 'Access denied. Admin only.' }, 401));
    server.on('POST /api/auth/refresh', () => json({ token: 'fresh' }));
    await openDashboard();
    expect(await screen.findByText('Authentication error: Access denied. Admin only.')).toBeInTheDocument();
    expect(server.calls('POST /api/auth/refresh')).toHaveLength(1);
  });
});

describe('Manage User modal', () => {
  async function openManage(extra: Record<string, Handler> = {}) {
    const server = api(extra);
    const app = await openDashboard();
    await app.user.click(await screen.findByRole('button', { name: 'Manage bob' }));
    const dialog = await screen.findByRole('dialog', { name: 'Manage User' });
    return { ...app, server, dialog };
  }

  it('shows the user and adjusts the balance', async () => {
    const { dialog, user, server } = await openManage({
      'PATCH /api/auth/users/u-bob/balance': () => json({ user: { ...bob, balance: 2488 } }),
    });
    expect(within(dialog).getByText('bob')).toBeInTheDocument();
    expect(within(dialog).getByText('bob@example.com')).toBeInTheDocument();
    expect(within(dialog).getByText('$2,500.50')).toBeInTheDocument();
    expect(within(dialog).getByText('No')).toBeInTheDocument();

    const amount = within(dialog).getByLabelText('Amount to Add/Remove');
    expect(amount).toHaveAttribute('step', '0.01');
    const update = within(dialog).getByRole('button', { name: 'Update Balance' });
    expect(update).toBeDisabled();
    await user.type(amount, '0');
    expect(update).toBeDisabled();
    await user.clear(amount);
    await user.type(amount, '-12.5');
    expect(update).toBeEnabled();
    await user.click(update);

    expect(await screen.findByText("Successfully updated bob's balance")).toBeInTheDocument();
    const {
      amount: sent,
      requestId,
      ...rest
    } = server.calls('PATCH /api/auth/users/u-bob/balance')[0]?.body as {
      amount: number;
      requestId: string;
    };
    expect(sent).toBe(-12.5);
    expect(requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(rest).toEqual({});
    expect(within(dialog).getByText('$2,488.00')).toBeInTheDocument();
    await waitFor(() => {
      expect(server.calls('GET /api/auth/users').length).toBeGreaterThan(1);
    });
  });

  it('reports a failed balance update', async () => {
    const { dialog, user } = await openManage({
      'PATCH /api/auth/users/u-bob/balance': () => json({}, 500),
    });
    await user.type(within(dialog).getByLabelText('Amount to Add/Remove'), '5');
    await user.click(within(dialog).getByRole('button', { name: 'Update Balance' }));
    expect(await screen.findByText('Failed to update balance')).toBeInTheDocument();
  });

  it('sends a retried adjustment with its id, even after reopening the dialog, and the next one with a new id', async () => {
    let failures = 1;
    const { dialog, user, server } = await openManage({
      'PATCH /api/auth/users/u-bob/balance': () =>
        failures-- > 0 ? json({}, 502) : json({ user: { ...bob, balance: 2505.5 } }),
    });
    await user.type(within(dialog).getByLabelText('Amount to Add/Remove'), '5');
    await user.click(within(dialog).getByRole('button', { name: 'Update Balance' }));
    expect(await screen.findByText('Failed to update balance')).toBeInTheDocument();
    // The answer was lost: the administrator closes the dialog, opens it again and sends the same amount.
    await user.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    await user.click(await screen.findByRole('button', { name: 'Manage bob' }));
    const again = await screen.findByRole('dialog', { name: 'Manage User' });
    const amount = within(again).getByLabelText('Amount to Add/Remove');
    const update = within(again).getByRole('button', { name: 'Update Balance' });
    await user.type(amount, '5');
    await user.click(update);
    expect(await screen.findByText("Successfully updated bob's balance")).toBeInTheDocument();
    // Answered: the same amount again is another adjustment, and so is another amount.
    await user.type(amount, '5');
    await user.click(update);
    await user.clear(amount);
    await user.type(amount, '7');
    await user.click(update);
    await waitFor(() => {
      expect(server.calls('PATCH /api/auth/users/u-bob/balance')).toHaveLength(4);
    });
    const ids = sentRequestIds(server);
    expect(ids[1]).toBe(ids[0]);
    expect(new Set(ids).size).toBe(3);
  });

  it('sends a refused adjustment again with a new id', async () => {
    const { dialog, user, server } = await openManage({
      'PATCH /api/auth/users/u-bob/balance': () => json({ message: 'Balance cannot go below 0' }, 400),
    });
    const update = within(dialog).getByRole('button', { name: 'Update Balance' });
    await user.type(within(dialog).getByLabelText('Amount to Add/Remove'), '-9999');
    await user.click(update);
    expect(await screen.findByText('Balance cannot go below 0')).toBeInTheDocument();
    await user.click(update);
    await waitFor(() => {
      expect(server.calls('PATCH /api/auth/users/u-bob/balance')).toHaveLength(2);
    });
    const ids = sentRequestIds(server);
    expect(ids[1]).not.toBe(ids[0]);
  });

  it('deletes after confirmation', async () => {
    const { dialog, user, server } = await openManage({
      'DELETE /api/auth/users/u-bob': () => json({ message: 'User deleted' }),
    });
    await user.click(within(dialog).getByRole('button', { name: 'Delete User' }));
    expect(
      within(dialog).getByText('Are you sure you want to delete user "bob"? This action cannot be undone.'),
    ).toBeInTheDocument();
    await user.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(within(dialog).getByRole('button', { name: 'Delete User' })).toBeInTheDocument();
    expect(server.calls('DELETE /api/auth/users/u-bob')).toHaveLength(0);

    await user.click(within(dialog).getByRole('button', { name: 'Delete User' }));
    await user.click(within(dialog).getByRole('button', { name: 'Yes, Delete' }));
    expect(await screen.findByText('Successfully deleted user bob')).toBeInTheDocument();
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    expect(server.calls('DELETE /api/auth/users/u-bob')).toHaveLength(1);
  });

  it('reports a failed deletion with the server message', async () => {
    const { dialog, user } = await openManage({
      'DELETE /api/auth/users/u-bob': () => json({ message: 'Cannot delete yourself' }, 400),
    });
    await user.click(within(dialog).getByRole('button', { name: 'Delete User' }));
    await user.click(within(dialog).getByRole('button', { name: 'Yes, Delete' }));
    expect(await screen.findByText('Cannot delete yourself')).toBeInTheDocument();
  });
});
