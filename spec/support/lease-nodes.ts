/**
 * The parent's side of the lease specs' processes (`lease-node.ts`): a handle per process, and one
 * herd round across them. Not a spec itself.
 */
import { expect } from 'vitest'
import type { Stats } from '../../src/index.js'
import { IpcChild } from './ipc-child.js'
import type { HerdReply, LeaseCommand, LeaseEvent, LeaseNodeConfig } from './lease-node.js'

/** Bound on each step a process is asked to take. */
export const STEP_DEADLINE_MS = 20_000

type Loading = Extract<LeaseEvent, { type: 'loading' }>

/** One process of a lease spec. */
export class LeaseNode extends IpcChild<LeaseCommand, LeaseEvent> {
  constructor(label: string, config: LeaseNodeConfig) {
    super(label, 'spec/support/lease-node.ts', config, STEP_DEADLINE_MS)
  }

  herd(id: string, readers: number): Promise<HerdReply> {
    return this.request({ op: 'herd', id, readers }, 2 * STEP_DEADLINE_MS)
  }

  stats(): Promise<Stats> {
    return this.request({ op: 'stats' })
  }

  loadings(id: string): number {
    return this.events.filter((e) => e.type === 'loading' && e.id === id).length
  }
}

/** A `loading` report for `id` from any of `nodes` (already reported, or the first to come). */
export function nextLoading(nodes: LeaseNode[], id: string): Promise<Loading> {
  return Promise.race(nodes.map((n) => n.event((e): e is Loading => e.type === 'loading' && e.id === id, `a load of ${id}`)))
}

/** A counter summed over processes. */
export const sumOf = (stats: Stats[], counter: keyof Stats) => stats.reduce((n, s) => n + s[counter], 0)

/**
 * One round of the herd: every process asks for the cold id `cold-<round>` with `readers` concurrent
 * reads; exactly one process loads it (the lease holder, released by the parent), and every reader
 * of every process gets that one answer.
 */
export async function herdRound(nodes: LeaseNode[], round: number, readers: number): Promise<void> {
  const id = `cold-${round}`
  const herds = nodes.map((n) => n.herd(id, readers))
  const holder = await nextLoading(nodes, id)
  const value = `round ${round}, loaded by ${holder.label}`
  expect(await nodes.find((n) => n.label === holder.label)!.request<boolean>({ op: 'release', id, value })).toBe(true)
  const answers = await Promise.all(herds)
  for (const tally of answers) expect(tally).toEqual({ [value]: readers })
  expect(nodes.reduce((n, node) => n + node.loadings(id), 0)).toBe(1)
}
