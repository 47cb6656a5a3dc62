import { useMutation } from '@tanstack/react-query';
import type { HitBlackjackRequestSchema, HitBlackjackResponseSchema } from '@/gen/fairplay/v1/game_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson, ApiRequest } from '@/lib/api-types';

export type HitBlackjackInput = ApiRequest<typeof HitBlackjackRequestSchema>;
export type HitBlackjackResult = ApiJson<typeof HitBlackjackResponseSchema>;

/** hitBlackjack deals the player one more card (POST /api/games/blackjack/hit). */
export function hitBlackjack(input: HitBlackjackInput): Promise<HitBlackjackResult> {
  return apiRequest<HitBlackjackResult>('/games/blackjack/hit', { method: 'POST', body: input });
}

export function useHitBlackjack() {
  return useMutation({ mutationFn: hitBlackjack });
}
