/**
 * The path of one cold miss (`npx tsx bench/cold-miss-path.ts`): for each way of reading, the files
 * of src/ it runs, its calls into the library and its entries into the owner, then the calls per
 * file, as Markdown. The same figures `spec/cold-miss-path.spec.ts` bounds; counts of calls, not
 * times, so they are the same on every machine and every run.
 */
import { renderTable } from './lib/format.js'
import { type ColdMissPath, measureColdMissPaths } from '../spec/support/cold-miss-path.js'

/** The figures per case, then each file's calls per case (`·` where the case does not run it). */
function renderColdMissPaths(paths: readonly ColdMissPath[]): string {
  const summary = renderTable({
    headers: ['read', 'files of src/', 'calls into src/', 'owner entries'],
    rows: paths.map((p) => [p.case, String(p.files.length), String(p.calls), String(p.ownerEntries)]),
  })
  const files = [...new Set(paths.flatMap((p) => p.files.map((f) => f.file)))].sort()
  const perFile = renderTable({
    headers: ['file', ...paths.map((p) => p.case)],
    rows: files.map((file) => [`src/${file}`, ...paths.map((p) => String(p.files.find((f) => f.file === file)?.calls ?? '·'))]),
  })
  return `# One cold miss\n\n${summary}\n\nCalls per file:\n\n${perFile}\n`
}

process.stdout.write(renderColdMissPaths(await measureColdMissPaths()))
