/**
 * The path of one cold miss through the library: which files of src/ run, how many calls into the
 * library it makes, and how many times it enters the owner, for each way of reading. Each case is
 * measured in a child process of its own (cold-miss-path-child.ts, under tsx, on the TypeScript
 * sources) with V8's precise coverage; see that file for how.
 */
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** The reads measured: `fetch` on a table without L2, `fetch` on a table with `memoryL2()`, and `getMany` of one id on a table with a `batchLoader`. */
export const COLD_MISS_CASES = ['fetch', 'fetch, memoryL2', 'getMany, batch loader'] as const

/** One of {@link COLD_MISS_CASES}. */
export type ColdMissCase = (typeof COLD_MISS_CASES)[number]

/** What one cold miss ran. */
export interface ColdMissPath {
  case: ColdMissCase
  /** Every file of src/ (relative to it) with a function called during the miss, with the calls made into its functions, by path. */
  files: { file: string; calls: number }[]
  /** Calls into functions of src/, all files together. */
  calls: number
  /** Times the owner's actor transition ran: batches handed to the owner. */
  ownerEntries: number
}

const root = fileURLToPath(new URL('../..', import.meta.url))
const child = fileURLToPath(new URL('./cold-miss-path-child.ts', import.meta.url))

/** Measures one cold miss of `kind` in a child process. Rejects with the child's stderr if it fails. */
export function measureColdMissPath(kind: ColdMissCase): Promise<ColdMissPath> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', child, kind], { cwd: root, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`measuring the cold miss of ${kind} failed: ${error.message}\n${stderr}`))
      else resolve(JSON.parse(stdout) as ColdMissPath)
    })
  })
}

/** Measures every case, one child at a time. */
export async function measureColdMissPaths(): Promise<ColdMissPath[]> {
  const paths: ColdMissPath[] = []
  for (const kind of COLD_MISS_CASES) paths.push(await measureColdMissPath(kind))
  return paths
}

/** The files `path` ran, one a line with its calls, for a message or a report. */
export function listFiles(path: ColdMissPath): string {
  return path.files.map(({ file, calls }) => `  src/${file} (${calls} call${calls === 1 ? '' : 's'})`).join('\n')
}
