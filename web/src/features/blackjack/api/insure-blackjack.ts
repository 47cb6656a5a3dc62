import { useMutation } from '@tanstack/react-query';
import type { InsureBlackjackRequestSchema, InsureBlackjackResponseSchema } from '@/gen/fairplay/v1/game_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson, ApiRequest } from '@/lib/api-types';

export type InsureBlackjackInput = ApiRequest<typeof InsureBlackjackRequestSchema>;
export type InsureBlackjackResult = ApiJson<typeof InsureBlackjackResponseSchema>;

/**
 * insureBlackjack answers the insurance (or even money) offer made when the dealer shows an ace
 * (POST /api/games/blackjack/insurance); the dealer then peeks.
 */
export function insureBlackjack(input: InsureBlackjackInput): Promise<InsureBlackjackResult> {
  return apiRequest<InsureBlackjackResult>('/games/blackjack/insurance', { method: 'POST', body: input });
}

export function useInsureBlackjack() {
  return useMutation({ mutationFn: insureBlackjack });
}
