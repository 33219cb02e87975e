import type { Contender } from './contenders/types.js'
import type { BenchConfig, WorkloadId } from './lib/config.js'
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
  pictures: Pictures
}

/** The pictures a run wrote, by workload, as paths relative to the report. */
export type Pictures = Partial<Record<WorkloadId, string>>

/** Each picture's alt text. */
const PICTURE_ALT: Partial<Record<WorkloadId, string>> = {
  W6: 'W6: loader calls over time, with and without jitter',
  W9: 'W9: hit rate per trace and contender',
  W12: 'W12: origin calls per 100 ms across the day, per contender, one instance and four',
}

/** BENCHMARKS.md: how to read it, the machine, versions (EchoStore's names the commit measured), knobs, the targets table, then every workload's tables. */
export function renderReport(input: ReportInput): string {
  const { cfg, machine: m, contenders, results, targets } = input
  const parts: string[] = []
  parts.push('# EchoStore benchmarks', '')
  parts.push(
    `Every contender runs in the same Node process per workload (W5: one child process each; W8 measures EchoStore alone against Redis, its herd in 4 child processes per Redis client; W10: a fresh process per import; W12: child processes per contender, one instance and four; W11 and W13 have readers of their own, listed in their sections), in interleaved repetitions whose order rotates; figures are medians, and each is also given as a ratio to a floor measured in the same run. "Spread" is half the range of the repetitions over their median.`,
    '',
  )
  if (!cfg.full)
    parts.push(
      `> **Partial run** (BENCH_SCALE ${cfg.scale}${cfg.only.length > 0 ? `, BENCH_ONLY ${cfg.only.join(',')}` : ''}${cfg.skip.length > 0 ? `, BENCH_SKIP ${cfg.skip.join(',')}` : ''}, workloads ${cfg.workloads.join(',')}): not the figures of record.`,
      '',
    )
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
        [
          'repetitions',
          `${cfg.reps} (W4, W7: ${cfg.heavyReps}; W5: 1 per contender; W8b: rounds as its section says; W9: 1 pass per trace and contender; W10: 9 processes per import; W12: 1 day per contender and shape)`,
        ],
      ],
    }),
    '',
  )
  parts.push(
    renderTable({
      caption: '## Contenders',
      headers: ['contender', 'kind', 'version', 'set up as'],
      rows: contenders.map((c) => [c.name, c.kind, contenderVersion(cfg.root, c), c.sitsOut !== undefined ? `${c.setup} (sits out ${c.sitsOut.workloads.join(', ')})` : c.setup]),
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
    const picture = input.pictures[w]
    if (picture !== undefined) parts.push(`![${PICTURE_ALT[w] ?? w}](${picture})`, '')
  }
  parts.push(
    '## Running it',
    '',
    "`npm run bench` builds the package (W10 imports the build), then runs everything at full size (writes this file, bench/cohort.svg, bench/hit-rates.svg and bench/day.svg). W8 needs Redis (`REDIS_URL`, default redis://127.0.0.1:6379) and is skipped with a line in its section when none answers; W12 starts a `redis-server` of its own for its four-instance shape (on `BENCH_REDIS_PORT`, default a free port), or uses `REDIS_URL` when none can be started. Knobs: `BENCH_SCALE` (e.g. 0.02 for a smoke run; below 1, W12 runs a 3 s day instead of 8 s), `BENCH_REPS` (default 5; W4 and W7 use at most 3), `BENCH_ONLY` / `BENCH_SKIP` (comma lists of contender names; floors always run unless skipped), `BENCH_WORKLOADS` (W1 to W13, e.g. `W1,W3`, or `W9` alone; workloads named after `npm run bench --` do the same, e.g. `npm run bench -- W12`), `BENCH_OUT`, `BENCH_REDIS_PORT`, `BENCH_CPU_PROF` (a directory: W12's child processes run under `node --cpu-prof` and write their profiles there, a folder per process), `REDIS_URL`. A partial run writes to `.bench-tmp/` instead.",
    '',
  )
  return parts.join('\n')
}
