/**
 * Options for a Redis connection EchoStore opens itself (L2 store, bus), chosen to fail fast and never crash:
 * - the offline queue stays on, so calls made before the first connect wait for it instead of failing
 *   at startup; `maxRetriesPerRequest: 1` bounds that wait during an outage (queued commands are
 *   rejected at every second failed reconnect: within a few hundred ms early in an outage, ~2 s at
 *   most once the backoff is capped);
 * - reconnects go on forever with a backoff capped at 1 s, so L2 comes back by itself;
 * - `connectTimeout: 1000` bounds a connect that hangs (a black-holed host).
 * The table's facade still puts its own short timeout on every call.
 */
export const FAIL_FAST = {
  maxRetriesPerRequest: 1,
  enableOfflineQueue: true,
  connectTimeout: 1_000,
  retryStrategy: (attempt: number) => Math.min(attempt * 50, 1_000),
} as const
