import { num } from '../lib/format.js'
import { zipfSequence } from '../lib/random.js'
import type { Trace, TraceShape } from './w9-trace.js'
import { ZIPF_ALPHA } from './w9-zipf-trace.js'

/** Share of the scan trace's requests that are one-off scan ids. */
export const SCAN_SHARE = 0.25

/** The scan trace and where its scan ids start. */
export interface ScanTrace extends Trace {
  /** Ids below this are Zipf ids; ids from it up are scan ids, each requested once. */
  firstScanId: number
  /** Scan ids per burst: the capacity, so one burst alone can flush a cache that keeps the newest ids. */
  burst: number
}

/**
 * Trace (c), Zipf with one-off scans: the requests run in periods of `capacity / SCAN_SHARE`; each
 * period is Zipf(α = {@link ZIPF_ALPHA}) requests (seeded by `seed`) over the low ids, then a burst
 * of `capacity` consecutive scan ids never requested before and never again. Scans are
 * {@link SCAN_SHARE} of the requests; the scan ids are the top of the key space, the Zipf ids the
 * rest.
 */
export function scanTrace(shape: TraceShape, seed: number): ScanTrace {
  const burst = shape.capacity
  const period = Math.round(burst / SCAN_SHARE)
  const isScan = (i: number) => i % period >= period - burst
  let scans = 0
  for (let i = 0; i < shape.requests; i++) if (isScan(i)) scans++
  const firstScanId = shape.keySpace - scans
  const zipf = zipfSequence(shape.requests, firstScanId, ZIPF_ALPHA, seed)
  const ids = new Uint32Array(shape.requests)
  let nextScan = firstScanId
  for (let i = 0; i < shape.requests; i++) ids[i] = isScan(i) ? nextScan++ : zipf[i]!
  return {
    name: 'scan',
    title: 'Zipf + one-off scans',
    ids,
    firstScanId,
    burst,
    recipe: `periods of ${num(period)} requests: ${num(period - burst)} Zipf(α = ${ZIPF_ALPHA}) requests over ids [0, ${num(firstScanId)}), then a burst of ${num(burst)} (= capacity) new ids from the top of the key space, each requested once; scans are ${num(SCAN_SHARE * 100)} % of the requests`,
  }
}
