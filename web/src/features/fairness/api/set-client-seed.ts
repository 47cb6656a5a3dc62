import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { SetClientSeedRequestSchema, SetClientSeedResponseSchema } from '@/gen/fairplay/v1/fairness_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson, ApiRequest } from '@/lib/api-types';
import { seedsQueryOptions } from './get-seeds';

export type SetClientSeedInput = ApiRequest<typeof SetClientSeedRequestSchema>;
export type SetClientSeedResult = ApiJson<typeof SetClientSeedResponseSchema>;

/** setClientSeed replaces the active pair's client seed; the nonce keeps counting (POST /api/fair/client-seed). */
export function setClientSeed(input: SetClientSeedInput): Promise<SetClientSeedResult> {
  return apiRequest<SetClientSeedResult>('/fair/client-seed', { method: 'POST', body: input });
}

export function useSetClientSeed() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: setClientSeed,
    onSuccess: (res) => {
      queryClient.setQueryData(seedsQueryOptions().queryKey, { seeds: res.seeds });
    },
  });
}
