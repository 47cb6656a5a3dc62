import { useMutation } from '@tanstack/react-query';
import type { StartBlackjackRequestSchema, StartBlackjackResponseSchema } from '@/gen/fairplay/v1/game_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson, ApiRequest } from '@/lib/api-types';

export type StartBlackjackInput = ApiRequest<typeof StartBlackjackRequestSchema>;
export type StartBlackjackResult = ApiJson<typeof StartBlackjackResponseSchema>;

/** startBlackjack stakes the bet and deals (POST /api/games/blackjack/start). */
export function startBlackjack(input: StartBlackjackInput): Promise<StartBlackjackResult> {
  return apiRequest<StartBlackjackResult>('/games/blackjack/start', { method: 'POST', body: input });
}

export function useStartBlackjack() {
  return useMutation({ mutationFn: startBlackjack });
}
