/**
 * The availability service's campaign workload: a marketing email lands and every tenant's catalogue
 * page asks for every availability summary at the same instant (a cohort filled together), then a
 * seeded hot-key stream follows: tenant uniform, key by Zipf (s = 1) rank, `readsPerMs` reads per ms
 * of a manual clock. With jitter 0 the cohort expires together and re-herds the origin; with jitter
 * the re-fill trickles.
 */
import type { ManualClock } from 'echostore/testing'
import type { Stats } from 'echostore'
import { seeded, zipf } from '../support/prng.js'
import type { AvailabilityOrigin } from './origin.js'
import type { AvailabilityReader } from './reader.js'

/** Options of {@link runCampaign}. */
export interface CampaignOptions {
  /** Reads per simulated ms after the launch. */
  readsPerMs: number
  /** Simulated ms of the hot-key stream. */
  durationMs: number
  /** Seed of the read stream. Default 7. */
  seed?: number
  /** Zipf exponent. Default 1. */
  zipfS?: number
}

/** What a campaign did, measured at the origin and by the cache. */
export interface CampaignResult {
  /** Reads issued (launch included), and those answered with an error. */
  reads: number
  errors: number
  /** Origin calls in all, at the launch instant (t = 0), and distinct (tenant, key) pairs among those. */
  originCalls: number
  launchCalls: number
  launchPairs: number
  /** Origin calls per 10 ms window after the launch instant, their peak, and where it was (ms). */
  callsPer10ms: number[]
  peakPer10ms: number
  peakAt: number
  /** Reads that cost no origin call. */
  saved: number
  /** The reader's stats (every tenant table summed). */
  stats: Stats
  /** Simulated ms, and the wall-clock ms the run took. */
  simulatedMs: number
  wallMs: number
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve))

/** Runs the campaign against `reader` (whose tables and origin run on `clock`, starting at t = 0). */
export async function runCampaign(reader: AvailabilityReader, origin: AvailabilityOrigin, clock: ManualClock, options: CampaignOptions): Promise<CampaignResult> {
  const { readsPerMs, durationMs, seed = 7, zipfS = 1 } = options
  const started = performance.now()
  const t0 = clock.now()
  const callsBefore = origin.calls
  const random = seeded(seed)
  const keys = origin.keys()
  const rank = zipf(keys.length, zipfS, random)
  const reads: Promise<unknown>[] = []
  let errors = 0
  /** Issues a read, counting its failure at once (so no rejection waits unhandled for the end). */
  const read = (tenant: string, key: string) => reads.push(reader.readKey(tenant, key).catch(() => void errors++))

  // The launch: every tenant reads every key at once. Each ms, the reads' flights get one turn to
  // reach L2 and the origin at that instant, then time moves and answers due get one turn to land.
  for (const tenant of origin.tenants) for (const key of keys) read(tenant, key)
  await turn()
  const launch = origin.log.slice(callsBefore)
  const launchPairs = new Set(launch.map((call) => JSON.stringify([call.tenant, call.key]))).size

  // The hot-key stream.
  for (let step = 0; step < durationMs; step++) {
    if (step > 0) {
      for (let i = 0; i < readsPerMs; i++) {
        const tenant = origin.tenants[Math.floor(random() * origin.tenants.length)]!
        read(tenant, keys[rank()]!)
      }
      await turn()
    }
    clock.advance(1)
    await turn()
  }
  // Let the last flights answer.
  while (reader.stats().inflight > 0) {
    clock.advance(1)
    await turn()
  }
  await Promise.all(reads)

  const calls = origin.log.slice(callsBefore)
  const callsPer10ms = new Array<number>(Math.ceil((clock.now() - t0) / 10) + 1).fill(0)
  for (const call of calls) if (call.at > t0) callsPer10ms[Math.floor((call.at - t0) / 10)]!++
  return {
    reads: reads.length,
    errors,
    originCalls: calls.length,
    launchCalls: launch.length,
    launchPairs,
    callsPer10ms,
    peakPer10ms: Math.max(...callsPer10ms),
    peakAt: callsPer10ms.indexOf(Math.max(...callsPer10ms)) * 10,
    saved: reads.length - calls.length,
    stats: reader.stats(),
    simulatedMs: clock.now() - t0,
    wallMs: Math.round(performance.now() - started),
  }
}
