import type { Contender } from './contenders/types.js'
import type { BenchConfig } from './lib/config.js'
import { num, renderSection, renderTable } from './lib/format.js'
import { contenderVersion, type Machine } from './lib/machine.js'
import type { Results, TargetRow } from './targets.js'

/** Everything BENCHMARKS.md is written from. */
export interface ReportInput {
  cfg: BenchConfig
  machine: Machine
  contenders: Contender[]
  results: Results
  targets: TargetRow[]
  svgWritten: string | undefined
}

/** BENCHMARKS.md: how to read it, the machine, versions (EchoStore's names the commit measured), knobs, the targets table, then every workload's tables. */
export function renderReport(input: ReportInput): string {
  const { cfg, machine: m, contenders, results, targets } = input
  const parts: string[] = []
  parts.push('# EchoStore benchmarks', '')
  parts.push(
    `Every contender runs in the same Node process per workload (W5: one child process each; W8 measures EchoStore alone against Redis, its herd in 4 child processes; W9: a fresh process per import), in interleaved repetitions whose order rotates; figures are medians, and each is also given as a ratio to a floor measured in the same run. "Spread" is half the range of the repetitions over their median.`,
    '',
  )
  if (!cfg.full) parts.push(`> **Partial run** (BENCH_SCALE ${cfg.scale}${cfg.only.length > 0 ? `, BENCH_ONLY ${cfg.only.join(',')}` : ''}${cfg.skip.length > 0 ? `, BENCH_SKIP ${cfg.skip.join(',')}` : ''}, workloads ${cfg.workloads.join(',')}): not the figures of record.`, '')
  parts.push(
    renderTable({
      caption: '## Machine and run',
      headers: ['', ''],
      rows: [
        ['CPU', m.cpu],
        ['cores', String(m.cores)],
        ['memory', `${num(m.memoryGiB, 1)} GiB`],
        ['Node', m.node],
        ['OS', m.platform],
        ['BENCH_SCALE', String(cfg.scale)],
        ['repetitions', `${cfg.reps} (W4, W7: ${cfg.heavyReps}; W5: 1 per contender; W8b: rounds as its section says)`],
      ],
    }),
    '',
  )
  parts.push(
    renderTable({
      caption: '## Contenders',
      headers: ['contender', 'kind', 'version', 'set up as'],
      rows: contenders.map((c) => [c.name, c.kind, contenderVersion(cfg.root, c), c.setup]),
    }),
    '',
  )
  parts.push(
    renderTable({
      caption: "## Targets\n\nRatio: EchoStore's figure over the reference the target names (a floor, a peer, the uniform share, or the bound itself).",
      headers: ['workload', 'target', 'measured', 'ratio', 'verdict'],
      rows: targets.map((t) => [t.workload, t.target, t.measured, t.ratio, t.verdict]),
    }),
    '',
  )
  for (const w of cfg.workloads) {
    const result = results[w]
    if (result !== undefined) parts.push(renderSection(result.section))
    if (w === 'W6' && input.svgWritten !== undefined) parts.push(`![W6: loader calls over time, with and without jitter](${input.svgWritten})`, '')
  }
  parts.push(
    '## Running it',
    '',
    '`npm run bench` builds the package (W9 imports the build), then runs everything at full size (writes this file and bench/cohort.svg). W8 needs Redis (`REDIS_URL`, default redis://127.0.0.1:6379) and is skipped with a line in its section when none answers. Knobs: `BENCH_SCALE` (e.g. 0.02 for a smoke run), `BENCH_REPS` (default 5; W4 and W7 use at most 3), `BENCH_ONLY` / `BENCH_SKIP` (comma lists of contender names; floors always run unless skipped), `BENCH_WORKLOADS` (e.g. `W1,W3`, or `W8` alone), `BENCH_OUT`, `REDIS_URL`. A partial run writes to `.bench-tmp/` instead.',
    '',
  )
  return parts.join('\n')
}
