/**
 * The pack-and-install test (`node .ci/pack-test.mjs`, run by .ci/run after npm test): `npm pack`
 * (whose prepare script builds dist/), a check of what the tarball holds, then one throwaway
 * consumer project per way of using EchoStore (.ci/consumers/), each installing the tarball and
 * running as its kind of user would. tsc, esbuild and @types/node come from this project's
 * node_modules; installs use --prefer-offline. Prints a line per consumer and exits 1 naming every
 * failure; the consumers' folder is removed when everything passed, and kept for a look otherwise.
 */
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
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
const ioredisVersion = devDependencies.ioredis
/** The OpenTelemetry packages the otel consumer installs, at the versions this project tests with. */
const OTEL_PACKAGES = ['@opentelemetry/api', '@opentelemetry/sdk-trace', '@opentelemetry/context-async-hooks'].map((name) => `${name}@${devDependencies[name]}`)
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
  const why = result.error !== undefined ? `failed to run (${result.error.message})` : result.signal !== null ? `was stopped by ${result.signal} after 120 s (did something keep it alive?)` : `exited with ${result.status}`
  throw new Error(`\`${[basename(command), ...args].join(' ')}\` in ${cwd} ${why}\n${result.stdout}${result.stderr}`.trimEnd())
}

/** Runs a Node script and returns its output. */
const node = (args, cwd, env) => run(process.execPath, args, cwd, env)

/** Packs the project (prepare builds it) and checks the tarball: the build, README.md, LICENSE, and nothing else. */
function pack() {
  const [report] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', work], root))
  const paths = report.files.map((file) => file.path)
  const stray = paths.filter((path) => !path.startsWith('dist/') && !TOP_LEVEL.includes(path))
  const wanted = [...TOP_LEVEL, ...ENTRIES.flatMap((entry) => ['esm', 'commonjs'].flatMap((dialect) => [`dist/${dialect}/${entry}.js`, `dist/${dialect}/${entry}.d.ts`]))]
  const missing = wanted.filter((path) => !paths.includes(path))
  if (stray.length > 0 || missing.length > 0) {
    throw new Error(`the tarball holds what it should not (${stray.join(', ') || 'nothing'}) or lacks what it should (${missing.join(', ') || 'nothing'})`)
  }
  return { tarball: join(work, report.filename), files: paths.length }
}

/** A new consumer project: the given files from .ci/consumers, a package.json, then the tarball (and `extra`) installed. */
function consumer(name, type, files, tarball, extra = []) {
  const dir = join(work, name)
  mkdirSync(dir)
  for (const file of files) cpSync(join(sources, file), join(dir, basename(file)))
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: `echostore-consumer-${name}`, private: true, type }, null, 2)}\n`)
  run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, ...extra], dir)
  return dir
}

/**
 * A TypeScript consumer: the shared main.ts with the tsconfig of `name`, compiled by this project's
 * tsc (with this project's @types/node lent to it), then run with node.
 */
function typescriptConsumer(name, tarball) {
  const dir = consumer(name, 'module', ['typescript/main.ts', `${name}/tsconfig.json`], tarball)
  mkdirSync(join(dir, 'node_modules', '@types'), { recursive: true })
  symlinkSync(join(root, 'node_modules', '@types', 'node'), join(dir, 'node_modules', '@types', 'node'), 'dir')
  node([tsc, '-p', 'tsconfig.json'], dir)
  return node([join('out', 'main.js'), name], dir)
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

/** Every consumer: its name, what it stands for, and how it is set up and run (returning what it printed). */
const CONSUMERS = [
  {
    name: 'esm',
    what: 'plain ES module JavaScript, neither ioredis nor @opentelemetry/api installed',
    run(tarball) {
      const dir = consumer('esm', 'module', ['herd.mjs', 'esm/main.mjs'], tarball)
      if (existsSync(join(dir, 'node_modules', 'ioredis'))) throw new Error('ioredis was installed with EchoStore; it is an optional peer dependency')
      return node(['main.mjs'], dir)
    },
  },
  {
    name: 'cjs',
    what: 'CommonJS require, neither ioredis nor @opentelemetry/api installed',
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
    what: `${OTEL_PACKAGES.join(', ')} installed, echostore/otel (instrument) imported and required: the span tree of a herd`,
    run(tarball) {
      return node(['main.mjs'], consumer('otel', 'module', ['herd.mjs', 'otel/main.mjs'], tarball, OTEL_PACKAGES))
    },
  },
  {
    name: 'redis',
    what: `ioredis ${ioredisVersion} installed, echostore/redis (redisL2 + redisBus) against ${redisUrl}`,
    async run(tarball) {
      const why = await redisUnreachable(redisUrl)
      if (why !== undefined) {
        if (process.env.CI === 'true') throw new Error(`Redis at ${redisUrl} does not answer (${why}); CI needs it`)
        return `skip redis: Redis at ${redisUrl} does not answer (${why}); start one (redis-server --daemonize yes --port 6379 --save "" --appendonly no) or set REDIS_URL\n`
      }
      return node(['main.mjs'], consumer('redis', 'module', ['herd.mjs', 'redis/main.mjs'], tarball, [`ioredis@${ioredisVersion}`]), { REDIS_URL: redisUrl })
    },
  },
]

const failures = []
console.log(`pack-test: npm pack (its prepare script builds dist/), consumers in ${work}`)
let packed
try {
  packed = pack()
  console.log(`pack-test: ${basename(packed.tarball)}, ${packed.files} files: dist/ (esm and commonjs, each with .d.ts), ${TOP_LEVEL.join(', ')}`)
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
