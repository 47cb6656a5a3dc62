import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiRequest } from '@/lib/api-client';
import type { UserStats } from './types';

export function getUserStats(): Promise<UserStats> {
  return apiRequest<UserStats>('/auth/stats/users');
}

export const userStatsQueryOptions = () =>
  queryOptions({ queryKey: ['admin', 'stats', 'users'], queryFn: getUserStats });

export function useUserStats() {
  return useQuery(userStatsQueryOptions());
}
