import { useMutation } from '@tanstack/react-query';
import type { StandBlackjackRequestSchema, StandBlackjackResponseSchema } from '@/gen/fairplay/v1/game_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson, ApiRequest } from '@/lib/api-types';

export type StandBlackjackInput = ApiRequest<typeof StandBlackjackRequestSchema>;
export type StandBlackjackResult = ApiJson<typeof StandBlackjackResponseSchema>;

/** standBlackjack ends the player's turn; the dealer plays and the game settles (POST /api/games/blackjack/stand). */
export function standBlackjack(input: StandBlackjackInput): Promise<StandBlackjackResult> {
  return apiRequest<StandBlackjackResult>('/games/blackjack/stand', { method: 'POST', body: input });
}

export function useStandBlackjack() {
  return useMutation({ mutationFn: standBlackjack });
}
