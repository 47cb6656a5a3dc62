import { useMutation } from '@tanstack/react-query';
import type { CashOutPumpRequestSchema, CashOutPumpResponseSchema } from '@/gen/fairplay/v1/game_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson, ApiRequest } from '@/lib/api-types';

export type CashOutPumpInput = ApiRequest<typeof CashOutPumpRequestSchema>;
export type CashOutPumpResult = ApiJson<typeof CashOutPumpResponseSchema>;

/** cashOutPump ends the running game and pays the stake times the multiplier (POST /api/games/pump/cashout). */
export function cashOutPump(input: CashOutPumpInput): Promise<CashOutPumpResult> {
  return apiRequest<CashOutPumpResult>('/games/pump/cashout', { method: 'POST', body: input });
}

export function useCashOutPump() {
  return useMutation({ mutationFn: cashOutPump });
}
