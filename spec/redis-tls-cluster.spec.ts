/**
 * A `rediss://` url of a Redis Cluster reaches every node over TLS, on either client library: the
 * node the url names and the nodes its slot map names. The spec makes a CA and a server certificate (openssl),
 * starts a one-node TLS cluster of its own on port 6465 (its child, stopped by its pid), and round-trips an
 * entry through `redisL2({ url: ['rediss://…'] })` in a child process, once with ioredis installed
 * and once with node-redis alone (`without-ioredis.cjs` hides ioredis).
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { within } from './support/ipc-child.js'
import { describeRedis } from './support/redis.js'

/** The TLS port of this spec's own cluster node (its cluster bus: + 10,000). */
const PORT = 6465
const root = join(import.meta.dirname, '..')
const entry = pathToFileURL(join(root, 'src', 'redis.ts')).href

describeRedis('a rediss:// cluster url', () => {
  let dir = ''
  /** This spec's own TLS cluster node: stopped by its pid (it is this spec's child). */
  let server: ChildProcess | undefined
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'echostore-tls-cluster-'))
    const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' })
    ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=echostore test CA', '-keyout', 'ca.key', '-out', 'ca.crt')
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', 'server.key', '-out', 'server.csr')
    writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n')
    ssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-extfile', 'ext.cnf', '-out', 'server.crt')
    server = spawn(
      'redis-server',
      [
        ...['--port', '0', '--tls-port', String(PORT), '--bind', '127.0.0.1', '--cluster-announce-ip', '127.0.0.1'],
        ...['--tls-cert-file', 'server.crt', '--tls-key-file', 'server.key', '--tls-ca-cert-file', 'ca.crt', '--tls-auth-clients', 'no', '--tls-cluster', 'yes'],
        ...['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--save', '', '--appendonly', 'no', '--dir', dir],
      ],
      { cwd: dir, stdio: ['ignore', 'pipe', 'ignore'] },
    )
    const ready = new Promise<void>((resolve, reject) => {
      let seen = ''
      server!.stdout!.setEncoding('utf8')
      server!.stdout!.on('data', (chunk: string) => {
        seen = (seen + chunk).slice(-4_096)
        if (seen.includes('Ready to accept connections')) resolve()
      })
      server!.once('exit', (code) => reject(new Error(`the TLS redis-server on ${PORT} exited (${code}) before it was ready: ${seen}`)))
    })
    await within(ready, 10_000, `the TLS redis-server on ${PORT}`)
    const cli = (...args: string[]) => execFileSync('redis-cli', ['--tls', '--cacert', join(dir, 'ca.crt'), '-p', String(PORT), ...args], { encoding: 'utf8' })
    cli('cluster', 'addslotsrange', '0', '16383')
    // A node that owns every slot says its state is ok within a few of its own cron ticks: ask until it does.
    for (let asked = 0; !cli('cluster', 'info').includes('cluster_state:ok'); asked++) {
      if (asked > 5_000) throw new Error(`the TLS cluster on ${PORT} never said cluster_state:ok`)
    }
  }, 60_000)

  afterAll(async () => {
    if (server !== undefined && server.exitCode === null) {
      const exited = once(server, 'exit')
      server.kill('SIGTERM')
      await exited
    }
    rmSync(dir, { recursive: true, force: true })
  })

  /** Writes and reads one entry through the url in a child process; `withoutIoredis`: node-redis alone. */
  async function roundTrip(withoutIoredis: boolean): Promise<unknown> {
    const script = `
      const { redisL2 } = await import(${JSON.stringify(entry)})
      let outage
      const l2 = redisL2({ url: ['rediss://127.0.0.1:${PORT}'], prefix: 'tls-${process.pid}:', onError: (e) => (outage ??= e) })
      let wrote = 'never'
      // A call made before the connection is up fails at once on node-redis: ask again each turn, until one lands or an outage is reported.
      while (wrote !== true && outage === undefined) {
        wrote = await l2.set('t', 'a', { kind: 'value', value: 7, version: 1, ttl: 5000 }).catch((e) => e.name + ': ' + e.message)
        if (wrote !== true) await new Promise((r) => setImmediate(r))
      }
      if (outage !== undefined) wrote = 'outage: ' + (outage.message ?? outage)
      const read = await l2.get('t', 'a').then((e) => e?.value, (e) => e.name)
      await l2.close()
      console.log(JSON.stringify({ wrote, read }))`
    const args = [...(withoutIoredis ? ['--require', join(root, 'spec', 'support', 'without-ioredis.cjs')] : []), '--import', 'tsx', '--input-type=module', '-e', script]
    const { stdout } = await promisify(execFile)(process.execPath, args, { cwd: root, timeout: 30_000, env: { ...process.env, NODE_EXTRA_CA_CERTS: join(dir, 'ca.crt') } })
    return JSON.parse(stdout.trim().split('\n').at(-1)!)
  }

  it('on ioredis, reads and writes every node over TLS', async () => {
    expect(await roundTrip(false)).toEqual({ wrote: true, read: 7 })
  }, 40_000)

  it('on node-redis alone, reads and writes every node over TLS, as on ioredis', async () => {
    expect(await roundTrip(true)).toEqual({ wrote: true, read: 7 })
  }, 40_000)
})
