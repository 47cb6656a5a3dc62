import { useMutation } from '@tanstack/react-query';
import type { CashOutMinesRequestSchema, CashOutMinesResponseSchema } from '@/gen/fairplay/v1/game_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson, ApiRequest } from '@/lib/api-types';

export type CashOutMinesInput = ApiRequest<typeof CashOutMinesRequestSchema>;
export type CashOutMinesResult = ApiJson<typeof CashOutMinesResponseSchema>;

/** cashOutMines ends the running game and pays the stake times the multiplier (POST /api/games/mines/cashout). */
export function cashOutMines(input: CashOutMinesInput): Promise<CashOutMinesResult> {
  return apiRequest<CashOutMinesResult>('/games/mines/cashout', { method: 'POST', body: input });
}

export function useCashOutMines() {
  return useMutation({ mutationFn: cashOutMines });
}
