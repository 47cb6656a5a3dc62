import type {
  AdjustBalanceRequestSchema,
  AdjustBalanceResponseSchema,
  DeleteUserResponseSchema,
  GetActivityStatsResponseSchema,
  GetUserStatsResponseSchema,
  GetWageringStatsResponseSchema,
  ListUsersResponseSchema,
  SearchUsersResponseSchema,
} from '@/gen/fairplay/v1/admin_pb';
import type { ApiJson, ApiRequest } from '@/lib/api-types';

// The admin dashboard's /api shapes, derived from AdminService (admin.proto).

/** UserPage is one page of GET /api/auth/users; pages count from 1. */
export type UserPage = ApiJson<typeof ListUsersResponseSchema>;

/** SearchPage is one page of GET /api/auth/users/search. */
export type SearchPage = ApiJson<typeof SearchUsersResponseSchema>;

/** AdminUser is a user row of the admin lists (createdAt is set there). */
export type AdminUser = UserPage['users'][number];

/** UserStats is GET /api/auth/stats/users; percent changes compare with the previous month or week. */
export type UserStats = ApiJson<typeof GetUserStatsResponseSchema>;

/** WageringStats is GET /api/auth/stats/wagering (dollars). */
export type WageringStats = ApiJson<typeof GetWageringStatsResponseSchema>;

/** ActivityStats is GET /api/auth/stats/activity: each game over the last 24 hours (rtp values are percentages) and the players active in the last 15 minutes. */
export type ActivityStats = ApiJson<typeof GetActivityStatsResponseSchema>;

/**
 * AdjustBalanceBody is the body of PATCH /api/auth/users/{id}/balance (the id travels in the path); requestId names
 * the adjustment, so sending it again after a lost answer does not apply it twice.
 */
export type AdjustBalanceBody = Pick<ApiRequest<typeof AdjustBalanceRequestSchema>, 'amount' | 'requestId'>;

/** AdjustBalanceResponse carries the user with the new balance. */
export type AdjustBalanceResponse = ApiJson<typeof AdjustBalanceResponseSchema>;

export type DeleteUserResponse = ApiJson<typeof DeleteUserResponseSchema>;
