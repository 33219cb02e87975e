/**
 * The docs' TypeScript is code a user can run as written: every ```ts block of README.md and of
 * docs/*.md is type-checked, each as its own module, against the package's entry points
 * (tsconfig.json's `paths`, as for the examples) with `strict`, `exactOptionalPropertyTypes` and
 * `noUncheckedIndexedAccess`. What the snippets take as given (the application's origin, request
 * and data) is declared in `PRELUDE`.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import { beforeAll, describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '..')
const readme = readFileSync(join(root, 'README.md'), 'utf8')
/** The documents whose blocks are checked, by path from the repository root. */
const documents = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((file) => file.endsWith('.md'))
    .map((file) => `docs/${file}`),
]

/** The placeholders the snippets use: declarations only, of the shapes the snippets expect. */
const PRELUDE = `
type EmojiSet = { id: string; emoji: string[] }
type Availability = { sku: string; inStock: number }
/** The application's origin. */
declare const db: {
  user(id: string): Promise<{ id: string; name: string }>
  emojiSet(id: string, options: { signal: AbortSignal }): Promise<EmojiSet>
}
/** The request being served. */
declare const request: { signal: AbortSignal }
declare const loadSet: import('echostore').Loader<EmojiSet>
declare const sku: string
declare const loadAvailability: import('echostore').Loader<Availability>
declare const table: import('echostore').Table<unknown>
`

/** A ```ts block of a document: the document, the line its first line of code is on, its text, and the file it is checked as. */
interface Block {
  doc: string
  line: number
  code: string
  file: string
}

function tsBlocks(doc: string, markdown: string): Block[] {
  const blocks: Block[] = []
  for (const match of markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)) {
    const line = markdown.slice(0, match.index).split('\n').length + 1
    const file = join(root, 'spec', '.readme', `${doc.replace(/[/.]/g, '-')}-line-${line}.ts`)
    blocks.push({ doc, line, code: match[1]!, file })
  }
  return blocks
}

const blocks = documents.flatMap((doc) => tsBlocks(doc, readFileSync(join(root, doc), 'utf8')))
const readmeBlocks = blocks.filter((b) => b.doc === 'README.md')
const prelude = join(root, 'spec', '.readme', 'prelude.d.ts')

/** Type-checks the blocks in one program, serving them (and the prelude) from memory; returns each file's diagnostics. */
function typeCheck(): Map<string, readonly ts.Diagnostic[]> {
  const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })
  if (config === undefined) throw new Error('tsconfig.json could not be read')
  const options: ts.CompilerOptions = { ...config.options, exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true, noUnusedLocals: false }
  // A block without import or export would be a script sharing one scope with the others.
  const sources = new Map(blocks.map((b) => [b.file, /^\s*(import|export)\s/m.test(b.code) ? b.code : `${b.code}\nexport {}\n`]))
  sources.set(prelude, PRELUDE)
  const host = ts.createCompilerHost(options)
  const { getSourceFile, fileExists, readFile } = host
  host.fileExists = (file) => sources.has(file) || fileExists(file)
  host.readFile = (file) => sources.get(file) ?? readFile(file)
  host.getSourceFile = (file, language, ...rest) => {
    const text = sources.get(file)
    return text !== undefined ? ts.createSourceFile(file, text, language) : getSourceFile(file, language, ...rest)
  }
  const program = ts.createProgram([prelude, ...blocks.map((b) => b.file)], options, host)
  const byFile = new Map<string, readonly ts.Diagnostic[]>([['(options)', [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()]]])
  for (const file of [prelude, ...blocks.map((b) => b.file)]) byFile.set(file, ts.getPreEmitDiagnostics(program, program.getSourceFile(file)))
  return byFile
}

/** Diagnostics as `<document>:<line>: <message>` lines. */
function describeDiagnostics(diagnostics: readonly ts.Diagnostic[], doc: string, firstLine: number): string[] {
  return diagnostics.map((d) => {
    const at = d.file !== undefined && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + firstLine : '?'
    return `${doc}:${at}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`
  })
}

describe('the TypeScript of README.md and docs/*.md', () => {
  let diagnostics: Map<string, readonly ts.Diagnostic[]>
  beforeAll(() => {
    diagnostics = typeCheck()
  }, 60_000)

  it('the README opens with its contents, then one quick start, whose TypeScript block imports the package', () => {
    const sections = [...readme.matchAll(/^## (.+)$/gm)].map((m) => m[1])
    expect(sections.slice(0, 2)).toEqual(['Contents', 'Quick start'])
    expect(sections.filter((title) => /quick start/i.test(title!))).toEqual(['Quick start'])
    const quickStart = readme.indexOf('\n## Quick start\n')
    const nextSection = readme.indexOf('\n## ', quickStart + 1)
    const first = readmeBlocks[0]!
    expect(first.line).toBeGreaterThan(readme.slice(0, quickStart).split('\n').length)
    expect(first.line).toBeLessThan(readme.slice(0, nextSection).split('\n').length)
    expect(first.code).toMatch(/from 'echostore'/)
  })

  it('the prelude of placeholders and the compiler options raise no error', () => {
    expect(describeDiagnostics([...diagnostics.get('(options)')!, ...diagnostics.get(prelude)!], 'prelude', 1)).toEqual([])
  })

  it.each(blocks.map((b) => [`${b.doc}:${b.line}`, b] as const))('the ```ts block at %s type-checks against the entry points', (_, block) => {
    expect(describeDiagnostics(diagnostics.get(block.file)!, block.doc, block.line)).toEqual([])
  })

  it('the README’s table of examples lists every example at the top of examples/, and each one it links exists', () => {
    const linked = [...readme.matchAll(/^\| \[`[^`]+`\]\(https:\/\/github\.com\/echostore\/echostore\/blob\/main\/(examples\/[^)]+)\)/gm)].map((m) => m[1]!)
    const topLevel = readdirSync(join(root, 'examples'))
      .filter((file) => file.endsWith('.ts'))
      .map((file) => `examples/${file}`)
    expect(topLevel.filter((file) => !linked.includes(file))).toEqual([])
    expect(linked.filter((file) => !existsSync(join(root, file)))).toEqual([])
  })

  it('every Redis example closes its table, then its l2 and bus, so the process can exit', () => {
    const redis = blocks.filter((b) => b.code.includes("from 'echostore/redis'"))
    expect(redis.map((b) => b.doc)).toEqual(expect.arrayContaining(['README.md', 'docs/operations.md']))
    for (const block of redis) expect(block.code).toMatch(/await stock\.close\(\)\s+await l2\.close\(\)\s+await bus\.close\(\)/)
  })
})
