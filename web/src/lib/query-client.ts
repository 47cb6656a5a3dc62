import { QueryClient } from '@tanstack/react-query';
import { ApiError } from './api-client';

/** makeQueryClient builds the app's QueryClient: client errors (4xx) are final, other failures retry once. */
export function makeQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        retry: (failureCount, error) =>
          !(error instanceof ApiError && error.status >= 400 && error.status < 500) && failureCount < 1,
        refetchOnWindowFocus: false,
        staleTime: 30 * 1000,
      },
      mutations: { retry: false },
    },
  });
}
