/**
 * W2's herd counted in machine instructions, not seconds (`npx tsx bench/herd-instructions.ts
 * [contender ...]`, needs valgrind): for each contender, the instructions one waiter of a herd of
 * 10,000 costs, its fetch, `Promise.all` and its answer together, as W2 times them. W2's µs per
 * waiter moves by ±20–50% between runs with what the process ran before; callgrind's counts of the
 * same code agree within a fraction of a percent, whatever else the machine is doing, once V8 runs
 * single-threaded (`--single-threaded`: its concurrent compiler and collector otherwise do a varying
 * share of the work, and two runs differed by up to 20%).
 *
 * Each contender runs twice under `valgrind --tool=callgrind` (child mode, this file with `--child`):
 * `WARM` untimed herds then `FEW` herds, and the same warm-up then `MANY` herds. The difference of the
 * two totals over `(MANY − FEW) × N` is the marginal cost of a waiter: start-up, compilation and the
 * warm-up cancel out. The children of one contender run at once, the contenders one after another.
 */
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { loadContender } from './contenders/index.js'
import type { Row } from './contenders/types.js'
import { num } from './lib/format.js'
import { ROW } from './lib/row.js'

/** Waiters per herd, as W2's larger herd. */
const N = 10_000
/** Herds before the counted ones, so both runs count compiled code. */
const WARM = 300
/** Herds of the two runs whose totals are subtracted. */
const FEW = 20
const MANY = 120

/** Child mode: `herds` herds of `contender` after the warm-up, on fresh ids, with a latched loader as in W2. */
async function runHerds(name: string, herds: number): Promise<void> {
  const contender = await loadContender(name)
  let latch: Promise<Row> = Promise.resolve(ROW)
  const cache = contender.create({ ttl: 600_000, capacity: WARM + herds + 1_024, loader: () => latch })
  const waiting = new Array<Promise<Row | undefined>>(N)
  let loads = 0
  for (let h = 0; h < WARM + herds; h++) {
    let open!: (row: Row) => void
    latch = new Promise<Row>((resolve) => (open = resolve))
    const id = `herd-${h}`
    for (let i = 0; i < N; i++) waiting[i] = cache.fetch(id)
    open(ROW)
    const answers = await Promise.all(waiting)
    if (answers[N - 1] !== ROW) throw new Error(`${name}: a waiter of herd ${h} got another answer`)
    loads++
  }
  await cache.close()
  process.stdout.write(`${loads}\n`)
}

/** Instructions callgrind counted for one child run. */
async function countInstructions(name: string, herds: number): Promise<number> {
  const self = fileURLToPath(import.meta.url)
  const { stderr } = await promisify(execFile)(
    'valgrind',
    ['--tool=callgrind', '--callgrind-out-file=/dev/null', process.execPath, '--single-threaded', '--import', 'tsx', self, '--child', name, String(herds)],
    {
      maxBuffer: 16 * 1024 * 1024,
      timeout: 1_800_000,
    },
  )
  const collected = /Collected : (\d+)/.exec(stderr)
  if (collected === null) throw new Error(`callgrind printed no total for ${name} (${herds} herds):\n${stderr.slice(-2_000)}`)
  return Number(collected[1])
}

if (process.argv[2] === '--child') {
  await runHerds(process.argv[3]!, Number(process.argv[4]))
} else {
  const names = process.argv.length > 2 ? process.argv.slice(2) : ['floor:single-flight', 'echostore', 'async-cache-dedupe']
  const perWaiter = new Map<string, number>()
  for (const name of names) {
    process.stderr.write(`herd-instructions: ${name} under callgrind (a few minutes)\n`)
    const [few, many] = await Promise.all([countInstructions(name, FEW), countInstructions(name, MANY)])
    perWaiter.set(name, (many - few) / ((MANY - FEW) * N))
  }
  const peer = perWaiter.get('async-cache-dedupe')
  const rows = [...perWaiter].map(([name, count]) => `| ${name} | ${num(count)} | ${peer === undefined ? 'n/a' : `${(count / peer).toFixed(2)}×`} |`)
  process.stdout.write(
    `# W2's herd in instructions\n\nA herd of ${num(N)}; instructions per waiter (fetch, Promise.all and answer), marginal over ${MANY - FEW} herds after ${WARM} untimed ones.\n\n| contender | instructions per waiter | × async-cache-dedupe |\n|---|---|---|\n${rows.join('\n')}\n`,
  )
}
