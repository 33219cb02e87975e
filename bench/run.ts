/**
 * The benchmark harness (`npm run bench`, or `npm run bench -- W12` for some workloads): loads the
 * selected contenders, runs W1–W13 in order (each with the contenders that do not sit it
 * out), writes the W6, W9 and W12 pictures and the report, and
 * prints the report. Progress goes to stderr.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, relative } from 'node:path'
import { performance } from 'node:perf_hooks'
import { selectContenders } from './contenders/index.js'
import type { Contender } from './contenders/types.js'
import { hitRateSvg } from './hit-rate-svg.js'
import { readConfig, type WorkloadId } from './lib/config.js'
import { canCollect } from './lib/gc.js'
import { machine } from './lib/machine.js'
import { progress } from './lib/progress.js'
import { renderReport, type Pictures } from './report.js'
import { chooseSeries, cohortSvg } from './svg.js'
import { evaluateTargets, type Results } from './targets.js'
import type { BenchContext, WorkloadResult } from './workloads/context.js'
import { markSatOut } from './workloads/sat-out.js'
import { runW1 } from './workloads/w1-hit.js'
import { runW2 } from './workloads/w2-herd.js'
import { runW3 } from './workloads/w3-cold.js'
import { runW4 } from './workloads/w4-zipf.js'
import { runW5 } from './workloads/w5-memory.js'
import { runW6, type W6Result } from './workloads/w6-cohort.js'
import { runW7 } from './workloads/w7-sweeper.js'
import { runW8 } from './workloads/w8-l2.js'
import { runW9, type W9Result } from './workloads/w9-hit-rate.js'
import { runW10 } from './workloads/w10-import.js'
import { runW11 } from './workloads/w11-batch.js'
import { runW12, type W12Result } from './workloads/w12-day.js'
import { runW13 } from './workloads/w13-weight.js'
import { daySvg } from './day-svg.js'

const RUNNERS: Record<WorkloadId, (ctx: BenchContext) => Promise<WorkloadResult>> = {
  W1: runW1,
  W2: runW2,
  W3: runW3,
  W4: runW4,
  W5: runW5,
  W6: runW6,
  W7: runW7,
  W8: runW8,
  W9: runW9,
  W10: runW10,
  W11: runW11,
  W12: runW12,
  W13: runW13,
}

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, text)
}

async function main(): Promise<void> {
  const cfg = readConfig(process.env, process.argv.slice(2))
  if (!canCollect) progress('gc is not exposed: run under `node --expose-gc` (npm run bench does) for steadier figures')
  const contenders = await selectContenders(cfg.only, cfg.skip)
  progress(`contenders: ${contenders.map((c) => c.name).join(', ')}`)
  progress(`workloads: ${cfg.workloads.join(', ')} · BENCH_SCALE ${cfg.scale} · ${cfg.reps} repetitions`)
  const results: Results = {}
  const pictures: Pictures = {}
  const picture = (w: WorkloadId, file: string, svg: string) => {
    write(file, svg)
    pictures[w] = relative(dirname(cfg.outFile), file)
    progress(`wrote ${file}`)
  }
  for (const w of cfg.workloads) {
    const t = performance.now()
    const sitsOut = (c: Contender) => c.sitsOut?.workloads.includes(w) === true
    const ctx: BenchContext = { cfg, contenders: contenders.filter((c) => !sitsOut(c)) }
    const result = await RUNNERS[w](ctx)
    // W10 times imports, W11 and W13 have readers of their own, not these contenders: nobody sits them out.
    if (w !== 'W10' && w !== 'W11' && w !== 'W13')
      markSatOut(
        result.section,
        contenders.filter(sitsOut).map((c) => ({ name: c.name, why: c.sitsOut!.why })),
      )
    results[w] = result
    progress(`${w} done in ${((performance.now() - t) / 1000).toFixed(1)} s`)
    if (w === 'W6' && chooseSeries(result as W6Result).length > 0) picture(w, cfg.svgFile, cohortSvg(result as W6Result))
    if (w === 'W9' && ctx.contenders.length > 0) picture(w, cfg.hitRateSvgFile, hitRateSvg(result as W9Result))
    if (w === 'W12' && (result as W12Result).panels.some((p) => p.series.length > 0)) picture(w, cfg.daySvgFile, daySvg((result as W12Result).plan, (result as W12Result).panels))
  }
  const report = renderReport({
    cfg,
    machine: machine(),
    contenders,
    results,
    targets: evaluateTargets(results),
    pictures,
  })
  write(cfg.outFile, report)
  process.stdout.write(report)
  progress(`wrote ${cfg.outFile}`)
}

main().then(
  () => process.stdout.write('', () => process.exit(0)),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exit(1)
  },
)
