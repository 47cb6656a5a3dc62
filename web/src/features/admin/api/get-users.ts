import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { apiRequest } from '@/lib/api-client';
import type { UserPage } from './types';

export const USERS_PAGE_SIZE = 10;

/** adminUsersKey prefixes every user-list query, so mutations can invalidate them all. */
export const adminUsersKey = ['admin', 'users'] as const;

export function getUsers(page: number): Promise<UserPage> {
  const params = new URLSearchParams({ page: String(page), limit: String(USERS_PAGE_SIZE) });
  return apiRequest<UserPage>(`/auth/users?${params.toString()}`);
}

export const usersQueryOptions = (page: number) =>
  queryOptions({
    queryKey: [...adminUsersKey, 'list', { page }],
    queryFn: () => getUsers(page),
    placeholderData: keepPreviousData,
  });

export function useUsers(page: number, { enabled }: { enabled: boolean }) {
  return useQuery({ ...usersQueryOptions(page), enabled });
}
