/**
 * What the type checker says about the most common loader mistake: a loader (or batch loader) that
 * may answer `undefined` on a table whose `V` does not admit it. The error names the fix, in a few
 * lines, instead of a mismatch of `PromiseLike`s. Compiles snippets with the TypeScript compiler
 * against the sources, as a user's editor would.
 */
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))
const SNIPPET = `${root}spec/loader-type-errors.snippet.ts`

/** The messages of the errors `code` gets (one string per error, its chain flattened), compiled against `src/index.ts`. */
function errorsOf(code: string): string[] {
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.Preserve,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2022.d.ts'],
    types: ['node'],
  }
  const host = ts.createCompilerHost(options)
  const source = `import { createTable } from '../src/index.js'\ninterface Product { name: string }\ndeclare function find(id: number): Promise<Product | undefined>\n${code}\n`
  const read = host.getSourceFile.bind(host)
  host.getSourceFile = (name, version, ...rest) => (name === SNIPPET ? ts.createSourceFile(name, source, version) : read(name, version, ...rest))
  const fileExists = host.fileExists.bind(host)
  host.fileExists = (name) => name === SNIPPET || fileExists(name)
  const program = ts.createProgram([SNIPPET], options, host)
  return ts.getPreEmitDiagnostics(program, program.getSourceFile(SNIPPET)).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
}

const FIX = 'loader may answer undefined: declare the table as createTable<V | undefined>'

describe('a loader that may answer undefined on a table whose V does not admit it', () => {
  it('is an error that names the fix, for a loader, an async loader and a batch loader, in a few lines', () => {
    const errors = errorsOf(
      [
        'createTable<Product, number>({ loader: (id) => find(id) })',
        'createTable<Product, number>({ loader: async (id) => find(id) })',
        'createTable<Product, number>({ batchLoader: async (ids) => ids.map(() => undefined) })',
      ].join('\n'),
    )
    expect(errors).toHaveLength(3)
    for (const error of errors) {
      expect(error).toContain(FIX)
      expect(error.split('\n').length).toBeLessThanOrEqual(4)
    }
  }, 60_000)

  it('compiles once the table admits undefined, and a loader answering V compiles as before', () => {
    expect(
      errorsOf(
        [
          'createTable<Product | undefined, number>({ loader: (id) => find(id) })',
          'createTable<Product, number>({ loader: async () => ({ name: "a" }) })',
          'createTable<Product, number>({ loader: () => Promise.reject(new Error("down")) })',
        ].join('\n'),
      ),
    ).toEqual([])
  }, 60_000)
})
