import { fileURLToPath } from 'node:url'
import { join } from 'node:path'

/** Every workload the bench knows, in run order. */
export const WORKLOADS = ['W1', 'W2', 'W3', 'W4', 'W5', 'W6', 'W7', 'W8', 'W9', 'W10', 'W11', 'W12', 'W13'] as const
/** One workload's id. */
export type WorkloadId = (typeof WORKLOADS)[number]

/** The run's knobs, read from the environment once. */
export interface BenchConfig {
  /** BENCH_SCALE: multiplies every size (1 = the full sizes; 0.02 for a smoke run). */
  scale: number
  /** BENCH_REPS: interleaved repetitions per workload (medians are over these); see `heavyReps`. */
  reps: number
  /** Repetitions of the two longest workloads (W4, W7): min(BENCH_REPS, 3), to keep a full run well under 10 minutes (W9 runs each trace once: its hit rates do not vary). */
  heavyReps: number
  /** BENCH_ONLY: contenders to run besides the floors (empty: all). */
  only: string[]
  /** BENCH_SKIP: contenders not to run. */
  skip: string[]
  /** BENCH_WORKLOADS, or the workloads named on the command line (`npm run bench -- W12`): workloads to run (default: all). */
  workloads: WorkloadId[]
  /** True for a full run: scale 1, every contender, every workload. */
  full: boolean
  /** Repository root. */
  root: string
  /** Where the report goes: BENCHMARKS.md for a full run, `.bench-tmp/` otherwise (BENCH_OUT overrides). */
  outFile: string
  /** Where the W6 picture goes: bench/cohort.svg for a full run, `.bench-tmp/` otherwise. */
  svgFile: string
  /** Where the W9 picture goes: bench/hit-rates.svg for a full run, `.bench-tmp/` otherwise. */
  hitRateSvgFile: string
  /** Where the W12 picture goes: bench/day.svg for a full run, `.bench-tmp/` otherwise. */
  daySvgFile: string
  /** BENCH_REDIS_PORT: the port of the redis-server W12 starts for its four-instance shape (default: a free one the OS gives). */
  ownRedisPort: number | undefined
  /** BENCH_CPU_PROF: a directory; when set, W12's child processes run under `node --cpu-prof` and write their profiles there. */
  cpuProfDir: string | undefined
  /** REDIS_URL: the Redis W8 measures against (default redis://127.0.0.1:6379); W8 is skipped when it does not answer. */
  redisUrl: string
}

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
}

/** Reads BENCH_SCALE, BENCH_REPS, BENCH_ONLY, BENCH_SKIP, BENCH_WORKLOADS (or workloads in `argv`), BENCH_OUT, BENCH_REDIS_PORT, BENCH_CPU_PROF and REDIS_URL. */
export function readConfig(env: NodeJS.ProcessEnv = process.env, argv: readonly string[] = []): BenchConfig {
  const scale = Number(env.BENCH_SCALE ?? '1')
  if (!(scale > 0 && scale <= 1)) throw new RangeError(`BENCH_SCALE must be in (0, 1], got ${env.BENCH_SCALE}`)
  const reps = Number(env.BENCH_REPS ?? '5')
  if (!(Number.isInteger(reps) && reps >= 1)) throw new RangeError(`BENCH_REPS must be an integer ≥ 1, got ${env.BENCH_REPS}`)
  const named = argv.flatMap((a) => list(a))
  const asked = (named.length > 0 ? named : list(env.BENCH_WORKLOADS)).map((w) => w.toUpperCase())
  for (const w of asked) {
    if (!(WORKLOADS as readonly string[]).includes(w)) throw new RangeError(`${named.length > 0 ? 'npm run bench --' : 'BENCH_WORKLOADS:'} unknown workload ${w}; known: ${WORKLOADS.join(', ')}`)
  }
  const port = env.BENCH_REDIS_PORT === undefined ? undefined : Number(env.BENCH_REDIS_PORT)
  if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65_536)) throw new RangeError(`BENCH_REDIS_PORT must be a TCP port, got ${env.BENCH_REDIS_PORT}`)
  const workloads = asked.length === 0 ? [...WORKLOADS] : WORKLOADS.filter((w) => asked.includes(w))
  const only = list(env.BENCH_ONLY)
  const skip = list(env.BENCH_SKIP)
  const full = scale === 1 && only.length === 0 && skip.length === 0 && workloads.length === WORKLOADS.length
  const root = fileURLToPath(new URL('../..', import.meta.url))
  const tmp = join(root, '.bench-tmp')
  return {
    scale,
    reps,
    heavyReps: Math.min(reps, 3),
    only,
    skip,
    workloads,
    full,
    root,
    outFile: env.BENCH_OUT ?? (full ? join(root, 'BENCHMARKS.md') : join(tmp, 'BENCHMARKS.md')),
    svgFile: full ? join(root, 'bench', 'cohort.svg') : join(tmp, 'cohort.svg'),
    hitRateSvgFile: full ? join(root, 'bench', 'hit-rates.svg') : join(tmp, 'hit-rates.svg'),
    daySvgFile: full ? join(root, 'bench', 'day.svg') : join(tmp, 'day.svg'),
    ownRedisPort: port,
    cpuProfDir: env.BENCH_CPU_PROF !== undefined && env.BENCH_CPU_PROF !== '' ? env.BENCH_CPU_PROF : undefined,
    redisUrl: env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  }
}

/** `n · scale`, rounded, never below `min`. */
export function scaled(cfg: BenchConfig, n: number, min = 1): number {
  return Math.max(min, Math.round(n * cfg.scale))
}
