import { useMutation } from '@tanstack/react-query';
import type { PlayKenoRequestSchema, PlayKenoResponseSchema } from '@/gen/fairplay/v1/game_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson, ApiRequest } from '@/lib/api-types';

export type PlayKenoInput = ApiRequest<typeof PlayKenoRequestSchema>;
export type PlayKenoResult = ApiJson<typeof PlayKenoResponseSchema>;

/** playKeno draws 10 of the 40 numbers against the selection (POST /api/games/keno). */
export function playKeno(input: PlayKenoInput): Promise<PlayKenoResult> {
  return apiRequest<PlayKenoResult>('/games/keno', { method: 'POST', body: input });
}

/** usePlayKeno plays a round; the screen shows the balance after the last flip (lib/bet-reveals). */
export function usePlayKeno() {
  return useMutation({ mutationFn: playKeno });
}
