import { useMutation } from '@tanstack/react-query';
import type { PlayPlinkoRequestSchema, PlayPlinkoResponseSchema } from '@/gen/fairplay/v1/game_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson, ApiRequest } from '@/lib/api-types';

export type PlayPlinkoInput = ApiRequest<typeof PlayPlinkoRequestSchema>;
export type PlayPlinkoResult = ApiJson<typeof PlayPlinkoResponseSchema>;

/** playPlinko drops one ball (POST /api/games/plinko). */
export function playPlinko(input: PlayPlinkoInput): Promise<PlayPlinkoResult> {
  return apiRequest<PlayPlinkoResult>('/games/plinko', { method: 'POST', body: input });
}

/** usePlayPlinko drops a ball; the screen shows the balance when the ball lands (lib/bet-reveals). */
export function usePlayPlinko() {
  return useMutation({ mutationFn: playPlinko });
}
