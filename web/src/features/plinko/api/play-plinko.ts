import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { PlayPlinkoRequestSchema, PlayPlinkoResponseSchema } from '@/gen/fairplay/v1/game_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson, ApiRequest } from '@/lib/api-types';
import { setUserBalance } from '@/lib/auth';

export type PlayPlinkoInput = ApiRequest<typeof PlayPlinkoRequestSchema>;
export type PlayPlinkoResult = ApiJson<typeof PlayPlinkoResponseSchema>;

/** playPlinko drops one ball (POST /api/games/plinko). */
export function playPlinko(input: PlayPlinkoInput): Promise<PlayPlinkoResult> {
  return apiRequest<PlayPlinkoResult>('/games/plinko', { method: 'POST', body: input });
}

/** usePlayPlinko drops a ball; the header's balance follows the response at once. */
export function usePlayPlinko() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: playPlinko,
    onSuccess: (res) => {
      setUserBalance(queryClient, res.newBalance);
    },
  });
}
