import { useMutation } from '@tanstack/react-query';
import type { DoubleBlackjackRequestSchema, DoubleBlackjackResponseSchema } from '@/gen/fairplay/v1/game_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson, ApiRequest } from '@/lib/api-types';

export type DoubleBlackjackInput = ApiRequest<typeof DoubleBlackjackRequestSchema>;
export type DoubleBlackjackResult = ApiJson<typeof DoubleBlackjackResponseSchema>;

/** doubleBlackjack doubles the stake, deals one card and lets the dealer play (POST /api/games/blackjack/double). */
export function doubleBlackjack(input: DoubleBlackjackInput): Promise<DoubleBlackjackResult> {
  return apiRequest<DoubleBlackjackResult>('/games/blackjack/double', { method: 'POST', body: input });
}

export function useDoubleBlackjack() {
  return useMutation({ mutationFn: doubleBlackjack });
}
