import { describe, expect, it } from 'vitest'
import { evaluateTargets, type Results } from '../bench/targets.js'
import type { W9Result } from '../bench/workloads/w9-hit-rate.js'

/** A W9 result with one trace, `requests` long, and each contender's loads. */
function w9(requests: number, loads: Record<string, number>): W9Result {
  const metrics = new Map(Object.entries(loads).map(([name, n]) => [name, { 'hitRate:zipf': 1 - n / requests, 'loads:zipf': n }]))
  return {
    metrics,
    shape: { requests, keySpace: requests, capacity: requests / 100 },
    traces: [{ name: 'zipf', title: 'stationary Zipf', hitRates: [] }],
    section: { id: 'W9', title: 'hit rate', method: '', tables: [], notes: [] },
  }
}

function w9Rows(results: Results) {
  return evaluateTargets(results).filter((t) => t.workload === 'W9')
}

describe('W9 targets', () => {
  it('fail a trace where a peer loads less, naming it, the ratio and the points', () => {
    const [row] = w9Rows({ W9: w9(1000, { echostore: 500, 'lru-cache': 450, transitory: 400, 'sieve-cache': 420 }) })
    expect(row).toEqual({
      workload: 'W9',
      target: 'zipf: hit rate ≥ the best of LRU, W-TinyLFU, SIEVE',
      measured: '50.0 % vs 60.0 % (transitory), −10.0 points',
      ratio: '0.83×',
      verdict: 'FAIL',
    })
  })

  it('pass a trace where EchoStore loads no more than the best peer', () => {
    const [row] = w9Rows({ W9: w9(1000, { echostore: 400, 'lru-cache': 450, transitory: 400 }) })
    expect(row).toMatchObject({ measured: '60.0 % vs 60.0 % (transitory), +0.0 points', verdict: 'pass' })
  })

  it('say "not measured" without W9, or without EchoStore or any peer in it', () => {
    expect(w9Rows({}).map((t) => t.verdict)).toEqual(['not measured'])
    expect(w9Rows({ W9: w9(1000, { 'lru-cache': 450 }) }).map((t) => t.verdict)).toEqual(['not measured'])
    expect(w9Rows({ W9: w9(1000, { echostore: 450 }) }).map((t) => t.verdict)).toEqual(['not measured'])
  })
})
