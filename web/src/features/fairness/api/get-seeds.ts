import { queryOptions, useQuery } from '@tanstack/react-query';
import type { GetSeedsResponseSchema } from '@/gen/fairplay/v1/fairness_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson } from '@/lib/api-types';

export type SeedsResponse = ApiJson<typeof GetSeedsResponseSchema>;
export type SeedPair = SeedsResponse['seeds'];

/** fairnessKey prefixes every fairness query, so seed changes can invalidate them all. */
export const fairnessKey = ['fairness'] as const;

/** getSeeds reads the active seed pair: the server seed's hash, the client seed and the nonce (GET /api/fair/seeds). */
export function getSeeds(): Promise<SeedsResponse> {
  return apiRequest<SeedsResponse>('/fair/seeds');
}

/** Every bet moves the nonce on, so the pair is read afresh whenever the panel opens. */
export const seedsQueryOptions = () =>
  queryOptions({ queryKey: [...fairnessKey, 'seeds'], queryFn: getSeeds, staleTime: 0 });

export function useSeeds() {
  return useQuery(seedsQueryOptions());
}
