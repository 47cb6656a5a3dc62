import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type {
  ExcludeSelfRequestSchema,
  GetLimitsResponseSchema,
  GetRealityCheckResponseSchema,
  SetLimitsRequestSchema,
  TakeBreakRequestSchema,
} from '@/gen/fairplay/v1/wallet_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson, ApiRequest } from '@/lib/api-types';

type RawLimits = ApiJson<typeof GetLimitsResponseSchema>['limits'];
/** PlayLimits are the settings as they apply now; pending is null when nothing looser waits (nullable on /api). */
export type PlayLimits = Omit<RawLimits, 'pending'> & { pending: RawLimits['pending'] | null };
export type RealityCheck = ApiJson<typeof GetRealityCheckResponseSchema>;
export type LimitsInput = ApiRequest<typeof SetLimitsRequestSchema>;

export const limitsKey = ['account', 'limits'];

/** The signed-in player's responsible-gambling settings (GET /api/limits). */
export const limitsQueryOptions = () =>
  queryOptions({
    queryKey: limitsKey,
    queryFn: async (): Promise<PlayLimits> =>
      (await apiRequest<ApiJson<typeof GetLimitsResponseSchema>>('/limits')).limits,
    retry: false,
  });

export function useLimits(enabled = true) {
  return useQuery({ ...limitsQueryOptions(), enabled });
}

/** useSetLimits replaces the limits and the reality check (POST /api/limits). */
export function useSetLimits() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: LimitsInput) => apiRequest<{ limits: PlayLimits }>('/limits', { method: 'POST', body: input }),
    onSuccess: (res) => {
      queryClient.setQueryData(limitsKey, res.limits);
    },
  });
}

/** useTakeBreak starts or extends a break (POST /api/limits/break). */
export function useTakeBreak() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: ApiRequest<typeof TakeBreakRequestSchema>) =>
      apiRequest<{ limits: PlayLimits }>('/limits/break', { method: 'POST', body: input }),
    onSuccess: (res) => {
      queryClient.setQueryData(limitsKey, res.limits);
    },
  });
}

/**
 * useExcludeSelf starts a self-exclusion (POST /api/limits/self-exclusion). Its variables hold the password: the
 * mutation is dropped from the cache as soon as nothing observes it (the form resets it once answered).
 */
export function useExcludeSelf() {
  const queryClient = useQueryClient();
  return useMutation({
    gcTime: 0,
    mutationFn: (input: ApiRequest<typeof ExcludeSelfRequestSchema>) =>
      apiRequest<{ limits: PlayLimits }>('/limits/self-exclusion', { method: 'POST', body: input }),
    onSuccess: (res) => {
      queryClient.setQueryData(limitsKey, res.limits);
    },
  });
}

/** fetchRealityCheck reads this session's time and result (GET /api/limits/reality-check). */
export function fetchRealityCheck(): Promise<RealityCheck> {
  return apiRequest<RealityCheck>('/limits/reality-check');
}
