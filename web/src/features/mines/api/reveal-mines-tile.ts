import { useMutation } from '@tanstack/react-query';
import type { RevealMinesTileRequestSchema, RevealMinesTileResponseSchema } from '@/gen/fairplay/v1/game_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson, ApiRequest } from '@/lib/api-types';

export type RevealTileInput = ApiRequest<typeof RevealMinesTileRequestSchema>;
export type RevealTileResult = ApiJson<typeof RevealMinesTileResponseSchema>;

/** revealMinesTile reveals one tile of the running game (POST /api/games/mines/click). */
export function revealMinesTile(input: RevealTileInput): Promise<RevealTileResult> {
  return apiRequest<RevealTileResult>('/games/mines/click', { method: 'POST', body: input });
}

export function useRevealMinesTile() {
  return useMutation({ mutationFn: revealMinesTile });
}
