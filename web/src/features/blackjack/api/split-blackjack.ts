import { useMutation } from '@tanstack/react-query';
import type { SplitBlackjackRequestSchema, SplitBlackjackResponseSchema } from '@/gen/fairplay/v1/game_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson, ApiRequest } from '@/lib/api-types';

export type SplitBlackjackInput = ApiRequest<typeof SplitBlackjackRequestSchema>;
export type SplitBlackjackResult = ApiJson<typeof SplitBlackjackResponseSchema>;

/** splitBlackjack splits a pair into two hands for a second stake (POST /api/games/blackjack/split). */
export function splitBlackjack(input: SplitBlackjackInput): Promise<SplitBlackjackResult> {
  return apiRequest<SplitBlackjackResult>('/games/blackjack/split', { method: 'POST', body: input });
}

export function useSplitBlackjack() {
  return useMutation({ mutationFn: splitBlackjack });
}
