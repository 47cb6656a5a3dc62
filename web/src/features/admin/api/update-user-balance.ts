import { useMutation, useQueryClient } from '@tanstack/react-query';
import { ApiError, apiRequest } from '@/lib/api-client';
import { setUserBalance, useUser } from '@/lib/auth';
import { newRequestId } from '@/lib/request-id';
import { adminUsersKey } from './get-users';
import type { AdjustBalanceBody, AdjustBalanceResponse } from './types';

/** amount is added to the balance; negative values subtract. */
export interface UpdateBalanceInput {
  userId: string;
  amount: number;
}

// The ids of adjustments sent without an answer that says whether they were applied (no response, a proxy's 502 or
// timeout, a 5xx), by user and amount: the same adjustment sent again within PENDING_MS, from this dialog or after
// reopening it or reloading the page, carries the same id, and the server applies it at most once. Later it is a new
// adjustment. In sessionStorage (this tab, across reloads); in memory where storage is refused.
export const PENDING_MS = 15 * 60 * 1000;
const memory = new Map<string, string>();
const pendingKey = ({ userId, amount }: UpdateBalanceInput) => `fairplay.adjustment.${userId}.${String(amount)}`;

function pending(input: UpdateBalanceInput): string | undefined {
  let kept: string | null | undefined;
  try {
    kept = sessionStorage.getItem(pendingKey(input));
  } catch {
    kept = memory.get(pendingKey(input));
  }
  const [id, since] = (kept ?? '').split(' ');
  return id && Date.now() - Number(since) < PENDING_MS ? id : undefined;
}

function remember(input: UpdateBalanceInput, id: string | undefined) {
  const key = pendingKey(input);
  const value = `${id ?? ''} ${String(Date.now())}`;
  try {
    if (id === undefined) sessionStorage.removeItem(key);
    else sessionStorage.setItem(key, value);
  } catch {
    if (id === undefined) memory.delete(key);
    else memory.set(key, value);
  }
}

/**
 * updateUserBalance sends an adjustment with its request id: the pending one of the same user and amount, else a new
 * one. It forgets the id once the answer says what happened (applied, or refused with a 4xx).
 */
export async function updateUserBalance(input: UpdateBalanceInput): Promise<AdjustBalanceResponse> {
  const kept = pending(input);
  const requestId = kept ?? newRequestId();
  // Kept from the first send: a retry does not extend the time.
  if (kept === undefined) remember(input, requestId);
  const body: AdjustBalanceBody = { amount: input.amount, requestId };
  try {
    const res = await apiRequest<AdjustBalanceResponse>(`/auth/users/${encodeURIComponent(input.userId)}/balance`, {
      method: 'PATCH',
      body,
    });
    remember(input, undefined);
    return res;
  } catch (err) {
    if (err instanceof ApiError && err.status >= 400 && err.status < 500) remember(input, undefined);
    throw err;
  }
}

export function useUpdateUserBalance() {
  const queryClient = useQueryClient();
  const me = useUser().data;
  return useMutation({
    mutationFn: updateUserBalance,
    onSuccess: (res, { userId }) => {
      // An administrator adjusting their own balance sees it in the header at once.
      if (me?._id === userId) setUserBalance(queryClient, res.user.balance);
      return queryClient.invalidateQueries({ queryKey: adminUsersKey });
    },
  });
}
