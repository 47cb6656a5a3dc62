import { useMutation } from '@tanstack/react-query';
import type { ChangePasswordRequestSchema, ChangePasswordResponseSchema } from '@/gen/fairplay/v1/auth_pb';
import { apiRequest } from '@/lib/api-client';
import type { ApiJson, ApiRequest } from '@/lib/api-types';

export function changePassword(body: ApiRequest<typeof ChangePasswordRequestSchema>) {
  return apiRequest<ApiJson<typeof ChangePasswordResponseSchema>>('/auth/change-password', { method: 'POST', body });
}

export function useChangePassword() {
  // Its variables hold both passwords: gone once nothing observes it (the form resets it).
  return useMutation({ mutationFn: changePassword, gcTime: 0 });
}
