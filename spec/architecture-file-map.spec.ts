/**
 * docs/architecture.md's file map names every file of src/, and names no file that is gone: the
 * map a newcomer reads is the tree.
 */
import { readFileSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '..')
const src = join(root, 'src')

/** Every source file under `dir`, as a path relative to src/. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sources(path)
    return /\.c?ts$/.test(entry.name) ? [relative(src, path)] : []
  })
}

/** The paths the file map's table names, in backticks in its first column. */
function mapped(): string[] {
  const doc = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8')
  const section = doc.slice(doc.indexOf('## File map'))
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .flatMap((line) => [...line.split('|')[1]!.matchAll(/`([^`]+)`/g)].map((match) => match[1]!))
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
