/**
 * The ES module build's second step (`npm run build` runs it after tshy): bundles the entries that
 * tshy compiled into `dist/esm` with esbuild, so that importing an entry loads a few files instead of
 * one per source module, and inlines the part of xstate the owner uses (Node resolves xstate's
 * `import` condition to its CommonJS build, whose loading cost more than all of EchoStore's own
 * code). The `.d.ts` files tshy wrote stay as they are; its `.js` files are replaced by the bundles.
 * The CommonJS build is left as tshy wrote it.
 *
 * The root entry is what every application imports, so it is built to load two files: `index.js`
 * and `chunks/core.js`. The other entries are bundled among themselves (sharing chunks of their own)
 * and take whatever they share with the root from `chunks/core.js`, so that every class and every
 * piece of module state exists once however many entries an application imports (an error thrown
 * by `echostore/testing` is an `instanceof` the class `echostore` exports).
 */
import { build } from 'esbuild'
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, sep } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const esm = join(root, 'dist', 'esm')
const staging = join(root, 'dist', '.esm-bundle')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))

/** The dependency the bundles carry inside them: only what the owner imports of it is kept. */
const INLINED = 'xstate'
/** The entries' compiled files, named after tshy's `exports` (`./src/index.ts` is `dist/esm/index.js`). */
const entries = Object.values(pkg.tshy.exports)
  .filter((source) => source.startsWith('./src/'))
  .map((source) => join(esm, source.slice('./src/'.length).replace(/\.ts$/, '.js')))
const rootEntry = join(esm, 'index.js')
const otherEntries = entries.filter((entry) => entry !== rootEntry)
/** Every other dependency and peer stays an import resolved where EchoStore is installed. */
const external = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.peerDependencies)].filter((name) => name !== INLINED)
/** Where the shared part of the root lives, and the specifier the other entries' bundles use for it until it is made relative. */
const CORE = 'chunks/core.js'
const CORE_SPECIFIER = 'echostore:core'

const common = { absWorkingDir: root, bundle: true, format: 'esm', platform: 'node', target: 'node20', external, logLevel: 'warning' }

/** Every `.js` file under `dir`, recursively. */
function scripts(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return scripts(path)
    return entry.name.endsWith('.js') ? [path] : []
  })
}

/** The compiled modules the root entry reaches. */
async function rootModules() {
  const { metafile } = await build({ ...common, entryPoints: [rootEntry], write: false, metafile: true })
  return new Set(
    Object.keys(metafile.inputs)
      .map((input) => join(root, input))
      .filter((path) => path.startsWith(esm + sep)),
  )
}

/**
 * An esbuild plugin for the other entries: a module the root also reaches becomes a re-export, from
 * the core chunk, of the names in `names` (a map from module to its export names; all of them
 * while the names are not known yet). `boundary` collects those modules: what the core chunk must
 * export.
 */
function fromCore(shared, boundary, names = new Map()) {
  return {
    name: 'from-core',
    setup(b) {
      b.onResolve({ filter: /^echostore:core$/ }, () => ({ path: CORE_SPECIFIER, external: true }))
      b.onResolve({ filter: /^\.\.?\// }, ({ path, resolveDir, importer }) => {
        const file = join(resolveDir, path)
        if (!shared.has(file) || !importer.startsWith(esm)) return undefined
        boundary.add(file)
        return { path: file, namespace: 'core' }
      })
      b.onLoad({ filter: /.*/, namespace: 'core' }, ({ path }) => ({
        contents: names.has(path) ? `export { ${names.get(path).join(', ')} } from ${JSON.stringify(CORE_SPECIFIER)}` : `export * from ${JSON.stringify(CORE_SPECIFIER)}`,
        loader: 'js',
      }))
    },
  }
}

/**
 * What each module of `modules` exports, read by importing tshy's build of it (these are modules
 * of the root entry, which loads no peer dependency). No two may export one name: the core chunk
 * exports them all side by side.
 */
async function exportNames(modules) {
  const names = new Map()
  const owner = new Map()
  for (const file of modules) {
    const list = Object.keys(await import(pathToFileURL(file).href))
    for (const name of list) {
      if (name === 'default' || owner.has(name))
        throw new Error(`bundle-esm: the core chunk cannot export ${name} of ${relative(esm, file)}${name === 'default' ? '' : ` and of ${relative(esm, owner.get(name))}`}`)
      owner.set(name, file)
    }
    names.set(file, list)
  }
  return names
}

rmSync(staging, { recursive: true, force: true })
const shared = await rootModules()
const others = { ...common, entryPoints: otherEntries, outbase: esm, outdir: staging, splitting: true, chunkNames: 'chunks/[name]-[hash]', metafile: true }
const boundary = new Set()
await build({ ...others, write: false, plugins: [fromCore(shared, boundary)] })
const names = await exportNames(boundary)

// The root and the core chunk: one build, so what both reach is one shared chunk... which is the core itself.
const coreSource = join(esm, '.core-entry.js')
writeFileSync(coreSource, [...names].map(([file, list]) => `export { ${list.join(', ')} } from ${JSON.stringify(`./${relative(esm, file).split(sep).join('/')}`)}`).join('\n'))
const rootBuild = await build({
  ...common,
  entryPoints: [
    { in: rootEntry, out: 'index' },
    { in: coreSource, out: CORE.replace(/\.js$/, '') },
  ],
  outdir: staging,
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  metafile: true,
})
rmSync(coreSource)
const otherBuild = await build({ ...others, plugins: [fromCore(shared, new Set(), names)] })

// The other entries' bundles name the core chunk by a placeholder: each gets the path from where it is.
for (const path of Object.keys(otherBuild.metafile.outputs).map((output) => join(root, output))) {
  const text = readFileSync(path, 'utf8')
  const core = relative(dirname(path), join(staging, CORE)).split(sep).join('/')
  writeFileSync(path, text.replaceAll(JSON.stringify(CORE_SPECIFIER), JSON.stringify(core.startsWith('.') ? core : `./${core}`)))
}

// The MIT licence asks for its notice in every copy: each file holding xstate's code starts with it.
const { version } = JSON.parse(readFileSync(join(root, 'node_modules', INLINED, 'package.json'), 'utf8'))
const licence = readFileSync(join(root, 'node_modules', INLINED, 'LICENSE'), 'utf8')
  .trim()
  .replaceAll('*/', '* /')
for (const [output, { inputs }] of Object.entries(rootBuild.metafile.outputs)) {
  if (!Object.keys(inputs).some((input) => input.includes(`node_modules/${INLINED}/`))) continue
  const path = join(root, output)
  writeFileSync(path, `/*! Contains parts of ${INLINED} ${version}:\n${licence}\n*/\n${readFileSync(path, 'utf8')}`)
}

for (const path of scripts(esm)) rmSync(path)
for (const path of scripts(staging)) {
  const target = join(esm, relative(staging, path))
  mkdirSync(dirname(target), { recursive: true })
  renameSync(path, target)
}
rmSync(staging, { recursive: true, force: true })
