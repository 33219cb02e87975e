import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { scaled } from '../lib/config.js'
import { num, ratio } from '../lib/format.js'
import { progress } from '../lib/progress.js'
import type { MemoryReport } from '../memory-child.js'
import type { TagMemoryReport } from '../tag-memory-child.js'
import { floorNamed, type BenchContext, type WorkloadResult } from './context.js'

/** Runs one W5 child script with `args` and returns its report, or throws with the child's stderr. */
function runChild<T>(root: string, script: string, args: string[]): T {
  const child = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', join(root, 'bench', script), ...args], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  })
  if (child.status !== 0) throw new Error(`W5 child ${script} ${args.join(' ')} failed (${child.status ?? child.signal}): ${child.stderr}`)
  const last = child.stdout.trim().split('\n').at(-1) ?? ''
  return JSON.parse(last) as T
}

/** Bytes a table may keep per distinct tag invalidated, once every row the tag covered expired and was swept (W5b's bound). */
export const TAG_BYTES_BOUND = 8

/**
 * W5 memory: bytes per row at 1M rows (heap + external after gc), one child process per
 * contender so no heap is shared. One measurement per contender: the figure barely moves between runs.
 */
export async function runW5(ctx: BenchContext): Promise<WorkloadResult> {
  const rows = scaled(ctx.cfg, 1_000_000, 10_000)
  const reports = new Map<string, MemoryReport>()
  for (const contender of ctx.contenders) {
    progress(`W5 memory · ${contender.name} · ${num(rows)} rows in a child process`)
    reports.set(contender.name, runChild<MemoryReport>(ctx.cfg.root, 'memory-child.ts', [contender.name, String(rows)]))
  }
  const floor = floorNamed(ctx, 'floor:map')
  const floorBytes = floor !== undefined ? reports.get(floor.name)!.bytesPerRow : Number.NaN
  const metrics = new Map<string, Record<string, number>>()
  const tableRows: string[][] = []
  for (const contender of ctx.contenders) {
    const r = reports.get(contender.name)!
    metrics.set(contender.name, { bytesPerRow: r.bytesPerRow })
    tableRows.push([
      contender.name,
      num(r.bytesPerRow, 1),
      ratio(r.bytesPerRow, floorBytes),
      num(r.heapBytes / 2 ** 20, 1),
      num(r.externalBytes / 2 ** 20, 1),
      r.held === null ? 'n/a' : num(r.held),
      num(r.fillMs),
    ])
  }
  const tags = scaled(ctx.cfg, 500_000, 20_000)
  const tagTables = []
  if (ctx.contenders.some((c) => c.name === 'echostore')) {
    progress(`W5b tag versions · echostore · ${num(tags)} distinct tags in a child process`)
    const t = runChild<TagMemoryReport>(ctx.cfg.root, 'tag-memory-child.ts', [String(tags)])
    metrics.set('echostore', { ...metrics.get('echostore'), bytesPerTag: t.bytesPerTag })
    tagTables.push({
      headers: ['contender', 'B per tag', `bound (${TAG_BYTES_BOUND} B)`, 'heap growth KiB', 'tags measured', 'rows held after'],
      rows: [['echostore', num(t.bytesPerTag, 2), ratio(t.bytesPerTag, TAG_BYTES_BOUND), num(t.heapBytes / 1024, 1), num(t.tags), num(t.rowsHeld)]],
    })
  }
  return {
    metrics,
    section: {
      id: 'W5',
      title: 'memory',
      method: `${num(rows)} rows filled through \`fetch\` (concurrency 64, ttl 1 h, capacity = rows, one shared row object) in a fresh \`node --expose-gc\` child per contender; bytes per row = growth of heapUsed + external after forced gc, from before the cache was created. Ids are built before the baseline, so keys count only where the cache copies them. Lower is better.`,
      tables: [{ headers: ['contender', 'B/row', '× floor:map', 'heap MiB', 'external MiB', 'rows held', 'fill ms'], rows: tableRows }, ...tagTables],
      notes:
        tagTables.length === 0
          ? []
          : [
              `W5b, tag versions (EchoStore alone): ${num(tags)} entities, each loaded with a tag of its own (\`user:<i>\`) and then invalidated, 20 per ms of a manual clock, in one table (ttl 1 s, no L2, sweepInterval 100 ms) in a fresh child; rows expire and are swept all along. B per tag = growth of heapUsed + external after forced gc between two readings, each taken once every row so far expired and was swept (the first after a tenth of the tags, which sizes the table's columns), over the tags invalidated in between: what the table keeps of a tag that no longer covers anything. Bound: ${TAG_BYTES_BOUND} B; a figure near 0 may come out below it (the collector's noise).`,
            ],
    },
  }
}
