import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { scaled } from '../lib/config.js'
import { num, ratio } from '../lib/format.js'
import { progress } from '../lib/progress.js'
import type { MemoryReport } from '../memory-child.js'
import { floorNamed, type BenchContext, type WorkloadResult } from './context.js'

/** Runs one W5 child for `name` and returns its report, or throws with the child's stderr. */
function runChild(root: string, name: string, rows: number): MemoryReport {
  const child = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', join(root, 'bench', 'memory-child.ts'), name, String(rows)], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  })
  if (child.status !== 0) throw new Error(`W5 child for ${name} failed (${child.status ?? child.signal}): ${child.stderr}`)
  const last = child.stdout.trim().split('\n').at(-1) ?? ''
  return JSON.parse(last) as MemoryReport
}

/**
 * W5 memory: bytes per row at 1M rows (heap + external after gc), one child process per
 * contender so no heap is shared. One measurement per contender: the figure barely moves between runs.
 */
export async function runW5(ctx: BenchContext): Promise<WorkloadResult> {
  const rows = scaled(ctx.cfg, 1_000_000, 10_000)
  const reports = new Map<string, MemoryReport>()
  for (const contender of ctx.contenders) {
    progress(`W5 memory · ${contender.name} · ${num(rows)} rows in a child process`)
    reports.set(contender.name, runChild(ctx.cfg.root, contender.name, rows))
  }
  const floor = floorNamed(ctx, 'floor:map')
  const floorBytes = floor !== undefined ? reports.get(floor.name)!.bytesPerRow : Number.NaN
  const metrics = new Map<string, Record<string, number>>()
  const tableRows: string[][] = []
  for (const contender of ctx.contenders) {
    const r = reports.get(contender.name)!
    metrics.set(contender.name, { bytesPerRow: r.bytesPerRow })
    tableRows.push([contender.name, num(r.bytesPerRow, 1), ratio(r.bytesPerRow, floorBytes), num(r.heapBytes / 2 ** 20, 1), num(r.externalBytes / 2 ** 20, 1), r.held === null ? 'n/a' : num(r.held), num(r.fillMs)])
  }
  return {
    metrics,
    section: {
      id: 'W5',
      title: 'memory',
      method: `${num(rows)} rows filled through \`fetch\` (concurrency 64, ttl 1 h, capacity = rows, one shared row object) in a fresh \`node --expose-gc\` child per contender; bytes per row = growth of heapUsed + external after forced gc, from before the cache was created. Ids are built before the baseline, so keys count only where the cache copies them. Lower is better.`,
      tables: [{ headers: ['contender', 'B/row', '× floor:map', 'heap MiB', 'external MiB', 'rows held', 'fill ms'], rows: tableRows }],
      notes: [],
    },
  }
}
