import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiRequest } from '@/lib/api-client';
import { adminUsersKey } from './get-users';
import { userStatsQueryOptions } from './get-user-stats';
import type { DeleteUserResponse } from './types';

export function deleteUser(userId: string): Promise<DeleteUserResponse> {
  return apiRequest<DeleteUserResponse>(`/auth/users/${encodeURIComponent(userId)}`, { method: 'DELETE' });
}

export function useDeleteUser() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: deleteUser,
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: adminUsersKey }),
        queryClient.invalidateQueries({ queryKey: userStatsQueryOptions().queryKey }),
      ]),
  });
}
