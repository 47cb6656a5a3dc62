import { useMutation } from '@tanstack/react-query';
import type { PumpBalloonRequestSchema, PumpBalloonResponseSchema } from '@/gen/fairplay/v1/game_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson, ApiRequest } from '@/lib/api-types';

export type PumpBalloonInput = ApiRequest<typeof PumpBalloonRequestSchema>;
export type PumpBalloonResult = ApiJson<typeof PumpBalloonResponseSchema>;

/** pumpBalloon pumps the running balloon once: it grows or bursts (POST /api/games/pump/pump). */
export function pumpBalloon(input: PumpBalloonInput): Promise<PumpBalloonResult> {
  return apiRequest<PumpBalloonResult>('/games/pump/pump', { method: 'POST', body: input });
}

export function usePumpBalloon() {
  return useMutation({ mutationFn: pumpBalloon });
}
