import { spawn } from 'node:child_process'
import type { BurstReport, FromBurstChild } from '../burst-child.js'
import { scaled } from '../lib/config.js'
import { num, sig, type Table } from '../lib/format.js'
import { interleave } from '../lib/interleave.js'
import { progress } from '../lib/progress.js'
import type { RedisClientName } from '../lib/redis.js'
import { median } from '../lib/stats.js'
import type { BenchContext } from './context.js'

/** Processes started together, cold ids each fetches at once (at scale 1), the loader's duration. */
const PROCESSES = 4
const IDS = 1_600
const LOADER_MS = 5
/** Bounds: a child's start-up (tsx compiles src/ on first import) and its burst. */
const STEP_TIMEOUT_MS = 60_000

/** One round of W8d: each process's report. */
type BurstRound = BurstReport[]

/** Spawns one fresh (cold) child and resolves it once ready; `go()` then starts its burst and resolves its report. */
async function coldChild(ctx: BenchContext, args: string[]): Promise<{ go: () => Promise<BurstReport> }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'bench/burst-child.ts', ...args], {
    cwd: ctx.cfg.root,
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    env: { ...process.env, REDIS_URL: ctx.cfg.redisUrl },
  })
  let stderr = ''
  proc.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4_000)))
  const next = (type: 'ready' | 'result') =>
    new Promise<FromBurstChild>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`W8d child ${proc.pid}: no "${type}" within ${STEP_TIMEOUT_MS} ms; stderr: ${stderr.trim()}`)), STEP_TIMEOUT_MS)
      const done = (error?: Error, message?: FromBurstChild) => {
        clearTimeout(timer)
        proc.off('message', onMessage).off('exit', onExit)
        if (error !== undefined) reject(error)
        else resolve(message!)
      }
      const onMessage = (m: FromBurstChild) => (m.type === 'failed' ? done(new Error(`W8d child ${proc.pid} failed: ${m.message}`)) : m.type === type ? done(undefined, m) : undefined)
      const onExit = (code: number | null) => done(new Error(`W8d child ${proc.pid} exited (${code}) before "${type}": ${stderr.trim()}`))
      proc.on('message', onMessage).on('exit', onExit)
    })
  await next('ready')
  return {
    go: async () => {
      const result = next('result')
      proc.send({ type: 'go' })
      const m = await result
      return (m as Extract<FromBurstChild, { type: 'result' }>).report
    },
  }
}

/**
 * W8d, a cold start: `PROCESSES` fresh processes started together (as after a deploy), each firing
 * one fetch of each of the same `IDS` cold ids at once, with `lease` and without it, alternating
 * over the repetitions (fresh ids per round). Counts what a burst does to L2: timeouts, breaker
 * skips (a breaker that opened), and the loads across processes.
 */
export async function runW8d(ctx: BenchContext, prefix: string): Promise<{ table: Table; notes: string[]; metrics: Record<string, number> }> {
  const ids = scaled(ctx.cfg, IDS, 100)
  const modes: { name: string; lease: boolean; client: RedisClientName }[] = [
    { name: 'with lease', lease: true, client: 'ioredis' },
    { name: 'without lease', lease: false, client: 'ioredis' },
    { name: 'with lease (node-redis)', lease: true, client: 'node-redis' },
    { name: 'without lease (node-redis)', lease: false, client: 'node-redis' },
  ]
  const runs = await interleave(`W8d cold burst ×${PROCESSES} processes`, modes, Math.max(3, ctx.cfg.reps), async (mode, rep): Promise<BurstRound> => {
    const roundPrefix = `${prefix}d${rep}${mode.lease ? 'l' : 'n'}${mode.client === 'ioredis' ? '' : 'r'}:`
    const children = await Promise.all(Array.from({ length: PROCESSES }, () => coldChild(ctx, [roundPrefix, String(ids), String(LOADER_MS), mode.lease ? '1' : '0', mode.client])))
    const reports = await Promise.all(children.map((c) => c.go()))
    progress(
      `W8d ${mode.name}: ${num(reports.reduce((s, r) => s + r.loads, 0))} loads, ${num(reports.reduce((s, r) => s + r.l2Timeouts, 0))} L2 timeouts, ${num(reports.reduce((s, r) => s + r.l2Skipped, 0))} skipped`,
    )
    return reports
  })
  const metrics: Record<string, number> = {}
  const rows = modes.map((mode) => {
    const rounds = runs.get(mode.name)!
    const sum = (round: BurstRound, key: keyof BurstReport) => round.reduce((s, r) => s + r[key], 0)
    const worst = (key: keyof BurstReport) => Math.max(...rounds.map((round) => sum(round, key)))
    const loads = median(rounds.map((round) => sum(round, 'loads')))
    const burstMs = median(rounds.map((round) => Math.max(...round.map((r) => r.burstMs))))
    const cpuMs = median(rounds.flatMap((round) => round.map((r) => r.cpuMs)))
    const key = `${mode.client === 'ioredis' ? 'burst' : 'nodeRedisBurst'}${mode.lease ? 'Lease' : 'NoLease'}`
    metrics[`${key}Timeouts`] = worst('l2Timeouts')
    metrics[`${key}Skipped`] = worst('l2Skipped')
    metrics[`${key}Loads`] = loads
    metrics[`${key}LoadsMax`] = worst('loads')
    metrics[`${key}Ids`] = ids
    return [
      mode.name,
      num(rounds.length),
      num(loads),
      num(median(rounds.map((round) => sum(round, 'leaseWaited')))),
      num(worst('l2Timeouts')),
      num(worst('l2Errors')),
      num(worst('l2Skipped')),
      sig(burstMs),
      sig(cpuMs),
    ]
  })
  return {
    metrics,
    table: {
      caption: `**W8d a cold start** (${PROCESSES} fresh processes started together, each fetching the same ${num(ids)} cold ids at once; loads and lease waits are medians over rounds, L2 failures the worst round, summed over the processes)`,
      headers: ['mode', 'rounds', 'loads (all processes)', 'lease_waited', 'l2_timeouts', 'l2_errors', 'l2_skipped (breaker open)', 'burst ms (slowest process)', 'CPU ms per process'],
      rows,
    },
    notes: [
      `W8d: each round spawns ${PROCESSES} new processes (\`node --import tsx bench/burst-child.ts\`: nothing compiled yet, as at a deploy), each with its own connection (ioredis, or node-redis in the rows marked so), \`redisL2\` and \`redisBus\`; on one go they fire a \`fetch\` of each of ${num(ids)} ids in one synchronous loop (a ${LOADER_MS} ms loader on a real timer). A cold process runs its first thousands of misses in the interpreter, so its event loop is busy for hundreds of ms: an L2 timeout that fired on its timer alone would time out answers already received (the figures before the facade waited for the next I/O poll: every call of such a burst timed out, and the breaker opened).`,
    ],
  }
}
