/** The soak's knobs, read from the environment once. */
export interface SoakConfig {
  /** `SOAK_SECONDS`: how long the workload runs (default {@link DEFAULT_SECONDS}). */
  seconds: number
  /** `SOAK_SEED`: the PRNG seed every stream of choices derives from (default {@link DEFAULT_SEED}). */
  seed: number
  /** `REDIS_URL`: the Redis behind the third table (default redis://127.0.0.1:6379). */
  redisUrl: string
  /** `CI=true`: the Redis table must run; a Redis that does not answer fails the run instead of skipping the table. */
  requireRedis: boolean
}

/** About three minutes: long enough for the sweeper, the breaker and every fault to come round dozens of times. */
export const DEFAULT_SECONDS = 180
/** A fixed seed, so two runs make the same choices in the same order. */
export const DEFAULT_SEED = 7_331

/** Reads `SOAK_SECONDS`, `SOAK_SEED`, `REDIS_URL` and `CI`; throws a RangeError naming a bad knob. */
export function readSoakConfig(env: NodeJS.ProcessEnv = process.env): SoakConfig {
  const seconds = Number(env.SOAK_SECONDS ?? DEFAULT_SECONDS)
  if (!(Number.isFinite(seconds) && seconds > 0)) throw new RangeError(`SOAK_SECONDS must be a number of seconds > 0, got ${env.SOAK_SECONDS}`)
  const seed = Number(env.SOAK_SEED ?? DEFAULT_SEED)
  if (!(Number.isInteger(seed) && seed >= 0 && seed < 2 ** 32)) throw new RangeError(`SOAK_SEED must be an integer in [0, 2^32), got ${env.SOAK_SEED}`)
  return { seconds, seed, redisUrl: env.REDIS_URL ?? 'redis://127.0.0.1:6379', requireRedis: env.CI === 'true' }
}
