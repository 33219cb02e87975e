/**
 * Measures one cold miss of one case in this process, with V8's precise coverage, and writes its
 * {@link ColdMissPath} as JSON to stdout: run by `measureColdMissPath` (cold-miss-path.ts) as
 * `node --import tsx cold-miss-path-child.ts <case>`, so that nothing but the case runs the library.
 *
 * Coverage starts before the library is imported, so every function of src/ is counted from its
 * first call. The case's table then takes `WARM_MISSES` cold misses on other ids (awaited one by
 * one: whatever a table does once, on its first misses, is done by then), and one more cold miss is
 * measured. A precise-coverage snapshot with call counts resets V8's counters as it is taken, so the
 * snapshot taken after the measured miss holds exactly the calls made since the one taken before it:
 * the difference the figures are made of. The measured window holds no macrotask turn (the reads
 * answer through promise jobs alone), so no timer of the process runs inside it.
 */
import { Session } from 'node:inspector/promises'
import { relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { COLD_MISS_CASES, type ColdMissCase, type ColdMissPath } from './cold-miss-path.js'

/** Cold misses on other ids before the measured one. Fewer than memoryL2's writes between its sweeps (64), so no sweep of the store falls in the window. */
const WARM_MISSES = 8

/** The file and function whose calls count the owner's entries: the actor's transition runs once per batch handed to the owner. */
const OWNER_FILE = 'owner/logic.ts'
const OWNER_ENTRY = 'transition'

const src = fileURLToPath(new URL('../../src/', import.meta.url))

/** One script's functions as precise coverage reports them: the first range of each is the function's own, with its call count. */
interface ScriptCoverage {
  url: string
  functions: { functionName: string; ranges: { count: number }[] }[]
}

const asked = process.argv[2] as ColdMissCase
if (!COLD_MISS_CASES.includes(asked)) throw new RangeError(`unknown case ${asked}; known: ${COLD_MISS_CASES.join(', ')}`)

const session = new Session()
session.connect()
await session.post('Profiler.enable')
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: true })

const { createTable, memoryL2 } = await import('../../src/index.js')

/** A read of one id that misses, as the case makes it; the loaders are here, outside src/, so they are not counted. */
function coldRead(kind: ColdMissCase): (id: string) => Promise<unknown> {
  const loader = (id: string) => Promise.resolve({ id })
  switch (kind) {
    case 'fetch': {
      const table = createTable<{ id: string }, string>({ name: 'cold' })
      return (id) => table.fetch(id, loader)
    }
    case 'fetch, memoryL2': {
      const table = createTable<{ id: string }, string>({ name: 'cold', l2: memoryL2() })
      return (id) => table.fetch(id, loader)
    }
    case 'getMany, batch loader': {
      const table = createTable<{ id: string }, string>({ name: 'cold', batchLoader: (ids) => Promise.resolve(ids.map((id) => ({ id }))) })
      return (id) => table.getMany([id])
    }
  }
}

/** Calls per function of src/ in `coverage`, as `[file relative to src/, function name, calls]`, only those called. */
function calledFunctions(coverage: ScriptCoverage[]): [string, string, number][] {
  const called: [string, string, number][] = []
  for (const script of coverage) {
    if (!script.url.startsWith('file:')) continue
    const file = relative(src, fileURLToPath(script.url))
    if (file.startsWith('..')) continue
    for (const fn of script.functions) {
      const calls = fn.ranges[0]!.count
      if (calls > 0) called.push([file, fn.functionName, calls])
    }
  }
  return called
}

const read = coldRead(asked)
for (let i = 0; i < WARM_MISSES; i++) await read(`warm-${i}`)

await session.post('Profiler.takePreciseCoverage')
await read('measured')
const { result } = await session.post('Profiler.takePreciseCoverage')
await session.post('Profiler.stopPreciseCoverage')
session.disconnect()

const called = calledFunctions(result as ScriptCoverage[])
const perFile = new Map<string, number>()
for (const [file, , calls] of called) perFile.set(file, (perFile.get(file) ?? 0) + calls)
const owner = (result as ScriptCoverage[]).find((script) => script.url.startsWith('file:') && relative(src, fileURLToPath(script.url)) === OWNER_FILE)
const entries = owner?.functions.filter((fn) => fn.functionName === OWNER_ENTRY) ?? []
if (entries.length === 0) throw new Error(`src/${OWNER_FILE} has no function \`${OWNER_ENTRY}\`, on which the owner's entries are counted: update the instrument`)
const ownerEntries = entries.reduce((sum, fn) => sum + fn.ranges[0]!.count, 0)

const path: ColdMissPath = {
  case: asked,
  files: [...perFile].map(([file, calls]) => ({ file, calls })).sort((a, b) => a.file.localeCompare(b.file)),
  calls: called.reduce((sum, [, , calls]) => sum + calls, 0),
  ownerEntries,
}
process.stdout.write(JSON.stringify(path))
