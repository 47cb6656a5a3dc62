import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiRequest } from '@/lib/api-client';
import { setUserBalance, useUser } from '@/lib/auth';
import { adminUsersKey } from './get-users';
import type { AdjustBalanceBody, AdjustBalanceResponse } from './types';

/** amount is added to the balance; negative values subtract. */
export type UpdateBalanceInput = AdjustBalanceBody & { userId: string };

export function updateUserBalance({ userId, amount, requestId }: UpdateBalanceInput): Promise<AdjustBalanceResponse> {
  const body: AdjustBalanceBody = { amount, requestId };
  return apiRequest<AdjustBalanceResponse>(`/auth/users/${encodeURIComponent(userId)}/balance`, {
    method: 'PATCH',
    body,
  });
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
