import { json, mockApi, setCsrfCookie } from '@/testing/mock-api';
import { signIn } from '@/testing/test-utils';
import { PENDING_MS, updateUserBalance } from './update-user-balance';

const path = 'PATCH /api/auth/users/u-bob/balance';
const ids = (server: ReturnType<typeof mockApi>) =>
  server.calls(path).map((c) => (c.body as { requestId: string }).requestId);

describe('updateUserBalance', () => {
  beforeEach(() => {
    setCsrfCookie();
    signIn();
  });

  it('keeps an unanswered adjustment id for PENDING_MS, then makes a new one', async () => {
    let now = 1_000_000;
    vi.spyOn(Date, 'now').mockImplementation(() => now);
    const server = mockApi({ [path]: () => json({}, 503) });
    const input = { userId: 'u-bob', amount: 5 };
    await expect(updateUserBalance(input)).rejects.toThrow();
    now += PENDING_MS - 1;
    await expect(updateUserBalance(input)).rejects.toThrow();
    now += 1;
    await expect(updateUserBalance(input)).rejects.toThrow();
    // Another user or amount is another adjustment.
    await expect(updateUserBalance({ userId: 'u-bob', amount: 6 })).rejects.toThrow();
    const [first, retry, later, other] = ids(server);
    expect(retry).toBe(first);
    expect(later).not.toBe(first);
    expect(other).not.toBe(later);
  });

  it('keeps the id in memory where sessionStorage is refused', async () => {
    vi.spyOn(Storage.prototype, 'getItem').mockImplementation(() => {
      throw new DOMException('refused', 'SecurityError');
    });
    vi.spyOn(Storage.prototype, 'setItem').mockImplementation(() => {
      throw new DOMException('refused', 'SecurityError');
    });
    const server = mockApi({ [path]: () => json({}, 502) });
    const input = { userId: 'u-bob', amount: -2.5 };
    await expect(updateUserBalance(input)).rejects.toThrow();
    await expect(updateUserBalance(input)).rejects.toThrow();
    const [first, retry] = ids(server);
    expect(first).toMatch(/^[0-9a-f-]{36}$/);
    expect(retry).toBe(first);
  });
});
