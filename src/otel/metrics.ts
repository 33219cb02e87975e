/**
 * Metrics from the tracing channels: fetch outcomes by table and outcome, stale answers by table,
 * loader and L2 call durations as histograms (in seconds), and lease acquisitions by outcome. Ids
 * never go on metrics.
 */
import type * as Api from '@opentelemetry/api'
import { type FetchChannelContext, type L2ChannelContext, type LoadChannelContext, fetchChannel, l2Channel, loadChannel } from '../core/channels.js'
import { SEMCONV, L2_OP, LEASE_OUTCOME, OUTCOME, TABLE, errorType } from './attributes.js'
import { type Subscription, type TracingHandlers, subscribeTracing } from './subscription.js'

/** The instruments' names, as a meter reader sees them. */
export const METRIC_NAMES = {
  fetches: 'echostore.fetches',
  staleAnswers: 'echostore.stale_answers',
  loadDuration: 'echostore.load.duration',
  l2Duration: 'echostore.l2.duration',
  leases: 'echostore.leases',
} as const

/** Seconds from `start` (a `performance.now()` reading) to now. */
function since(start: number): number {
  return (performance.now() - start) / 1_000
}

/** Subscribes the instruments of `meter` to the tracing channels; the returned subscription undoes it. */
export function subscribeMetrics(meter: Api.Meter, onError: (error: unknown) => void): Subscription {
  const fetches = meter.createCounter(METRIC_NAMES.fetches, { description: 'Fetches by table and outcome (hit, negative, miss, coalesced, stale, error)', unit: '{fetch}' })
  const stale = meter.createCounter(METRIC_NAMES.staleAnswers, { description: 'Answers served from a graced value, by table', unit: '{answer}' })
  const loads = meter.createHistogram(METRIC_NAMES.loadDuration, { description: 'Duration of loader calls (origin work), by table', unit: 's' })
  const l2 = meter.createHistogram(METRIC_NAMES.l2Duration, { description: 'Duration of L2 calls, by table and operation', unit: 's' })
  const leases = meter.createCounter(METRIC_NAMES.leases, { description: 'Lease acquisitions by table and outcome (acquired, busy, failed)', unit: '{lease}' })
  /** When each load or L2 call began: written only here. */
  const began = new WeakMap<object, number>()

  const onFetch: TracingHandlers<FetchChannelContext> = {
    asyncEnd({ table, outcome = 'error', stale: graced = 0 }) {
      fetches.add(1, { [TABLE]: table, [OUTCOME]: outcome })
      if (graced > 0) stale.add(graced, { [TABLE]: table })
    },
  }
  /** Handlers that time each call from `start` to `asyncEnd` and hand the seconds to `ended`. */
  function timed<C extends object>(ended: (seconds: number, context: C) => void): TracingHandlers<C> {
    return {
      start: (context) => void began.set(context, performance.now()),
      asyncEnd(context) {
        const start = began.get(context)
        if (start !== undefined) ended(since(start), context)
      },
    }
  }
  const onLoad = timed<LoadChannelContext>((seconds, context) => {
    loads.record(seconds, 'error' in context ? { [TABLE]: context.table, [SEMCONV.errorType]: errorType(context.error) } : { [TABLE]: context.table })
  })
  const onL2 = timed<L2ChannelContext>((seconds, context) => {
    const failed = 'error' in context
    const attributes: Api.Attributes = { [TABLE]: context.table, [L2_OP]: context.op }
    l2.record(seconds, failed ? { ...attributes, [SEMCONV.errorType]: errorType(context.error) } : attributes)
    if (context.op === 'leases.acquire') leases.add(1, { [TABLE]: context.table, [LEASE_OUTCOME]: failed ? 'failed' : context.result === true ? 'acquired' : 'busy' })
    else if (context.op === 'leases.readOrAcquire') {
      // A read that found a fill asked for no lease: nothing to count.
      const lease = failed ? 'failed' : (context.result as { lease?: string } | undefined)?.lease
      if (lease === 'failed' || lease === 'taken' || lease === 'busy') leases.add(1, { [TABLE]: context.table, [LEASE_OUTCOME]: lease === 'taken' ? 'acquired' : lease })
    } else if (context.op === 'leases.acquireMany') {
      // One call for many ids: a failure counts once (the channel does not carry how many ids it was for).
      const taken = failed || !Array.isArray(context.result) ? undefined : (context.result as boolean[])
      if (taken === undefined) leases.add(1, { [TABLE]: context.table, [LEASE_OUTCOME]: 'failed' })
      else {
        const acquired = taken.filter((held) => held).length
        if (acquired > 0) leases.add(acquired, { [TABLE]: context.table, [LEASE_OUTCOME]: 'acquired' })
        if (taken.length > acquired) leases.add(taken.length - acquired, { [TABLE]: context.table, [LEASE_OUTCOME]: 'busy' })
      }
    }
  })

  const removers = [subscribeTracing(fetchChannel, onFetch, onError), subscribeTracing(loadChannel, onLoad, onError), subscribeTracing(l2Channel, onL2, onError)]
  return {
    unsubscribe() {
      for (const remove of removers) remove()
    },
  }
}
