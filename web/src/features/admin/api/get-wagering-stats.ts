import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiRequest } from '@/lib/api-client';
import type { WageringStats } from './types';

export function getWageringStats(): Promise<WageringStats> {
  return apiRequest<WageringStats>('/auth/stats/wagering');
}

// Loaded once, on the first opening of the Money tab (SPEC.md §2).
export const wageringStatsQueryOptions = () =>
  queryOptions({ queryKey: ['admin', 'stats', 'wagering'], queryFn: getWageringStats, staleTime: Infinity });

export function useWageringStats({ enabled }: { enabled: boolean }) {
  return useQuery({ ...wageringStatsQueryOptions(), enabled });
}
