import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { apiRequest } from '@/lib/api-client';
import { adminUsersKey, USERS_PAGE_SIZE } from './get-users';
import type { SearchPage } from './types';

export function searchUsers(query: string, page: number): Promise<SearchPage> {
  const params = new URLSearchParams({ query, page: String(page), limit: String(USERS_PAGE_SIZE) });
  return apiRequest<SearchPage>(`/auth/users/search?${params.toString()}`);
}

export const searchUsersQueryOptions = (query: string, page: number) =>
  queryOptions({
    queryKey: [...adminUsersKey, 'search', { query, page }],
    queryFn: () => searchUsers(query, page),
    placeholderData: keepPreviousData,
  });

export function useSearchUsers(query: string, page: number, { enabled }: { enabled: boolean }) {
  return useQuery({ ...searchUsersQueryOptions(query, page), enabled });
}
