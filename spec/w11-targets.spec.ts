import { describe, expect, it } from 'vitest'
import { evaluateTargets, type Results } from '../bench/targets.js'
import type { WorkloadResult } from '../bench/workloads/context.js'

/** A W11 result with each reader's origin calls and pages/s. */
function w11(figures: Record<string, readonly [calls: number, pagesPerSec: number]>): WorkloadResult {
  return {
    metrics: new Map(Object.entries(figures).map(([name, [originCalls, pagesPerSec]]) => [name, { originCalls, pagesPerSec }])),
    section: { id: 'W11', title: 'the N+1 read', method: '', tables: [], notes: [] },
  }
}

function w11Rows(results: Results) {
  return evaluateTargets(results).filter((t) => t.workload === 'W11')
}

const PEERS = { 'echostore fetch': [5_000, 11_000], 'dataloader + lru-cache': [820, 20_000], 'cachified createBatch': [707, 1_000] } as const

describe('W11 targets', () => {
  it('pass getMany with the fewest origin calls and 1.5× the fastest peer, naming the reader each is held to', () => {
    const rows = w11Rows({ W11: w11({ 'echostore getMany': [600, 30_000], ...PEERS }) })
    expect(rows).toEqual([
      { workload: 'W11', target: "echostore getMany: origin calls ≤ the fewest of the other readers'", measured: '600 vs 707 (cachified createBatch)', ratio: '0.85×', verdict: 'pass' },
      { workload: 'W11', target: "echostore getMany: pages/s ≥ 1.5× the best peer's", measured: '30,000 vs 20,000 pages/s (dataloader + lru-cache)', ratio: '1.50×', verdict: 'pass' },
    ])
  })

  it('fail pages/s under 1.5× the fastest peer, and calls above any other reader, EchoStore fetch included', () => {
    const rows = w11Rows({ W11: w11({ 'echostore getMany': [900, 29_000], ...PEERS, 'echostore fetch': [800, 11_000] }) })
    expect(rows.map((r) => [r.measured, r.verdict])).toEqual([
      ['900 vs 707 (cachified createBatch)', 'FAIL'],
      ['29,000 vs 20,000 pages/s (dataloader + lru-cache)', 'FAIL'],
    ])
  })

  it("hold each of EchoStore's batched reads to the others, not to each other", () => {
    const rows = w11Rows({ W11: w11({ 'echostore getMany': [707, 10_000], 'echostore get per id': [700, 31_000], ...PEERS }) })
    expect(rows.map((r) => [r.target, r.verdict])).toEqual([
      ["echostore getMany: origin calls ≤ the fewest of the other readers'", 'pass'],
      ["echostore getMany: pages/s ≥ 1.5× the best peer's", 'FAIL'],
      ["echostore get per id: origin calls ≤ the fewest of the other readers'", 'pass'],
      ["echostore get per id: pages/s ≥ 1.5× the best peer's", 'pass'],
    ])
  })

  it('never hold a batched read to the origin calls of the floor of a read per id, a reference written for the bench', () => {
    const rows = w11Rows({ W11: w11({ 'echostore get per id': [707, 31_000], 'floor: a promise per id': [500, 60_000], ...PEERS }) })
    expect(rows.map((r) => [r.measured, r.verdict])).toEqual([
      ['707 vs 707 (cachified createBatch)', 'pass'],
      ['31,000 vs 20,000 pages/s (dataloader + lru-cache)', 'pass'],
    ])
  })

  it('say "not measured" without W11, or without EchoStore or any peer in it', () => {
    expect(w11Rows({}).map((t) => t.verdict)).toEqual(['not measured', 'not measured'])
    expect(w11Rows({ W11: w11({ 'dataloader + lru-cache': [820, 20_000] }) }).map((t) => t.verdict)).toEqual(['not measured', 'not measured'])
    expect(w11Rows({ W11: w11({ 'echostore getMany': [600, 30_000] }) }).map((t) => t.verdict)).toEqual(['not measured', 'not measured'])
  })
})
