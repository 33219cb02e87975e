/**
 * The benchmark harness (`npm run bench`): loads the selected contenders, runs W1–W9 in order,
 * writes the W6 picture and the report, and prints the report. Progress goes to stderr.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, relative } from 'node:path'
import { performance } from 'node:perf_hooks'
import { selectContenders } from './contenders/index.js'
import { readConfig, type WorkloadId } from './lib/config.js'
import { canCollect } from './lib/gc.js'
import { machine } from './lib/machine.js'
import { progress } from './lib/progress.js'
import { renderReport } from './report.js'
import { chooseSeries, cohortSvg } from './svg.js'
import { evaluateTargets, type Results } from './targets.js'
import type { BenchContext, WorkloadResult } from './workloads/context.js'
import { runW1 } from './workloads/w1-hit.js'
import { runW2 } from './workloads/w2-herd.js'
import { runW3 } from './workloads/w3-cold.js'
import { runW4 } from './workloads/w4-zipf.js'
import { runW5 } from './workloads/w5-memory.js'
import { runW6, type W6Result } from './workloads/w6-cohort.js'
import { runW7 } from './workloads/w7-sweeper.js'
import { runW8 } from './workloads/w8-l2.js'
import { runW9 } from './workloads/w9-import.js'

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
}

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, text)
}

async function main(): Promise<void> {
  const cfg = readConfig()
  if (!canCollect) progress('gc is not exposed: run under `node --expose-gc` (npm run bench does) for steadier figures')
  const contenders = await selectContenders(cfg.only, cfg.skip)
  progress(`contenders: ${contenders.map((c) => c.name).join(', ')}`)
  progress(`workloads: ${cfg.workloads.join(', ')} · BENCH_SCALE ${cfg.scale} · ${cfg.reps} repetitions`)
  const ctx: BenchContext = { cfg, contenders }
  const results: Results = {}
  let svgWritten: string | undefined
  for (const w of cfg.workloads) {
    const t = performance.now()
    results[w] = await RUNNERS[w](ctx)
    progress(`${w} done in ${((performance.now() - t) / 1000).toFixed(1)} s`)
    if (w === 'W6' && chooseSeries(results.W6 as W6Result).length > 0) {
      write(cfg.svgFile, cohortSvg(results.W6 as W6Result))
      svgWritten = relative(dirname(cfg.outFile), cfg.svgFile)
      progress(`wrote ${cfg.svgFile}`)
    }
  }
  const report = renderReport({
    cfg,
    machine: machine(),
    contenders,
    results,
    targets: evaluateTargets(results),
    svgWritten,
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
