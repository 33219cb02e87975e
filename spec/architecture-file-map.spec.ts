/**
 * docs/architecture.md describes the tree as it is: its file map names every file of src/ and no
 * file that is gone, the paragraph on the shape names every entry and every folder of src/ and
 * nothing else, and every file its "who writes what" table points to exists. The map a newcomer
 * reads is the tree.
 */
import { readFileSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '..')
const src = join(root, 'src')
const doc = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8')

/** Every source file under `dir`, as a path relative to src/. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sources(path)
    return /\.c?ts$/.test(entry.name) ? [relative(src, path)] : []
  })
}

/** The text of the `## heading` section, up to the next section. */
function section(heading: string): string {
  const start = doc.indexOf(`\n## ${heading}\n`)
  if (start < 0) throw new Error(`architecture.md has no section "${heading}"`)
  const end = doc.indexOf('\n## ', start + 1)
  return doc.slice(start, end < 0 ? undefined : end)
}

/** What `text` puts in backticks. */
function quoted(text: string): string[] {
  return [...text.matchAll(/`([^`]+)`/g)].map((match) => match[1]!)
}

/** The body rows of the Markdown tables in `text`, as their cells (each table's header and rule rows left out). */
function tableRows(text: string): string[][] {
  const lines = text.split('\n')
  const rule = (line: string | undefined) => line !== undefined && /^\|( *-+ *\|)+$/.test(line)
  return lines.filter((line, i) => line.startsWith('|') && !rule(line) && !rule(lines[i + 1])).map((line) => line.split('|').slice(1, -1))
}

/** The paths the file map's table names, in backticks in its first column. */
function mapped(): string[] {
  return tableRows(section('File map')).flatMap((cells) => quoted(cells[0]!))
}

/** The paragraph of "The shape" that says what src/ holds. */
function holdsParagraph(): string {
  const paragraph = section('The shape')
    .split('\n\n')
    .find((p) => p.startsWith('`src/` holds'))
  if (paragraph === undefined) throw new Error('architecture.md\'s "The shape" has no paragraph starting "`src/` holds"')
  return paragraph
}

describe("architecture.md's file map", () => {
  it('names every file under src/', () => {
    const named = new Set(mapped())
    expect(sources(src).filter((file) => !named.has(file))).toEqual([])
  })

  it('names no file that is not under src/', () => {
    const files = new Set(sources(src))
    expect(mapped().filter((file) => !files.has(file))).toEqual([])
  })
})

describe("architecture.md's paragraph on what src/ holds", () => {
  const named = quoted(holdsParagraph()).filter((name) => name !== 'src/')
  const entries = readdirSync(src, { withFileTypes: true })

  it('names every folder of src/, and no other', () => {
    const folders = entries.filter((entry) => entry.isDirectory()).map((entry) => `${entry.name}/`)
    expect(named.filter((name) => name.endsWith('/')).sort()).toEqual(folders.sort())
  })

  it('names every entry file at the top of src/, and no other', () => {
    const files = entries.filter((entry) => entry.isFile() && /\.c?ts$/.test(entry.name)).map((entry) => entry.name)
    expect(named.filter((name) => !name.endsWith('/')).sort()).toEqual(files.sort())
  })
})

describe("architecture.md's who-writes-what table", () => {
  const named = tableRows(section('Who writes what')).flatMap((cells) => cells.flatMap(quoted).filter((name) => /\.c?ts$/.test(name)))

  it('points to files', () => {
    expect(named.length).toBeGreaterThan(0)
  })

  it('names only files that are under src/', () => {
    const files = new Set(sources(src))
    expect(named.filter((file) => !files.has(file))).toEqual([])
  })
})
