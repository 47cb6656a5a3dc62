import { useMutation } from '@tanstack/react-query';
import type { StartMinesRequestSchema, StartMinesResponseSchema } from '@/gen/fairplay/v1/game_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson, ApiRequest } from '@/lib/api-types';

export type StartMinesInput = ApiRequest<typeof StartMinesRequestSchema>;
export type StartMinesResult = ApiJson<typeof StartMinesResponseSchema>;

/** startMines stakes the bet and hides the mines (POST /api/games/mines/start). */
export function startMines(input: StartMinesInput): Promise<StartMinesResult> {
  return apiRequest<StartMinesResult>('/games/mines/start', { method: 'POST', body: input });
}

export function useStartMines() {
  return useMutation({ mutationFn: startMines });
}
