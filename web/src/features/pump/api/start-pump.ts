import { useMutation } from '@tanstack/react-query';
import type { StartPumpRequestSchema, StartPumpResponseSchema } from '@/gen/fairplay/v1/game_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson, ApiRequest } from '@/lib/api-types';

export type StartPumpInput = ApiRequest<typeof StartPumpRequestSchema>;
export type StartPumpResult = ApiJson<typeof StartPumpResponseSchema>;

/** startPump stakes the bet and starts a balloon (POST /api/games/pump/start). */
export function startPump(input: StartPumpInput): Promise<StartPumpResult> {
  return apiRequest<StartPumpResult>('/games/pump/start', { method: 'POST', body: input });
}

export function useStartPump() {
  return useMutation({ mutationFn: startPump });
}
