import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiRequest } from '@/lib/api-client';
import type { ActivityStats } from './types';

export function getActivityStats(): Promise<ActivityStats> {
  return apiRequest<ActivityStats>('/auth/stats/activity');
}

export const activityStatsQueryOptions = () =>
  queryOptions({ queryKey: ['admin', 'stats', 'activity'], queryFn: getActivityStats, staleTime: 60 * 1000 });

export function useActivityStats({ enabled }: { enabled: boolean }) {
  return useQuery({ ...activityStatsQueryOptions(), enabled });
}
