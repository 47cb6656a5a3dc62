import { useMutation } from '@tanstack/react-query';
import type { PlayDiceRequestSchema, PlayDiceResponseSchema } from '@/gen/fairplay/v1/game_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson, ApiRequest } from '@/lib/api-types';

export type PlayDiceInput = ApiRequest<typeof PlayDiceRequestSchema>;
export type PlayDiceResult = ApiJson<typeof PlayDiceResponseSchema>;

/** playDice places one roll-under bet (POST /api/games/dice). */
export function playDice(input: PlayDiceInput): Promise<PlayDiceResult> {
  return apiRequest<PlayDiceResult>('/games/dice', { method: 'POST', body: input });
}

/** usePlayDice places a bet; the screen shows the balance when the roll lands (lib/bet-reveals). */
export function usePlayDice() {
  return useMutation({ mutationFn: playDice });
}
