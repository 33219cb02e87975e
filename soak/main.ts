/**
 * `npm run soak`: runs the soak for `SOAK_SECONDS` (default 180) with `SOAK_SEED`, progress lines on
 * stderr, the report on stdout; exits 1 when a check fails or the soak cannot run. The Redis table
 * runs when Redis answers at `REDIS_URL`, and always under `CI=true` (where a Redis that does not
 * answer fails the run); otherwise it is skipped with a message saying how to start one.
 */
import { redisUnreachable } from '../bench/lib/redis.js'
import { readSoakConfig } from './config.js'
import { renderReport } from './report.js'
import { runSoak } from './run.js'

const HOW_TO_START = 'start one with: redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no (or set REDIS_URL)'

async function main(): Promise<boolean> {
  const config = readSoakConfig()
  const why = config.requireRedis ? undefined : await redisUnreachable(config.redisUrl)
  if (why !== undefined) process.stderr.write(`[soak] skipping the redis table: nothing answers at ${config.redisUrl} (${why}); ${HOW_TO_START}\n`)
  const result = await runSoak({
    seconds: config.seconds,
    seed: config.seed,
    redis: why === undefined ? { url: config.redisUrl } : { skipped: `Redis at ${config.redisUrl} did not answer` },
    progressEvery: 5_000,
    progress: (line) => process.stderr.write(`${line}\n`),
  })
  process.stdout.write(`${renderReport(result)}\n`)
  return result.passed
}

main().then(
  (passed) => (process.exitCode = passed ? 0 : 1),
  (error: unknown) => {
    process.stderr.write(`[soak] could not run: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  },
)
