/**
 * The script that starts the Redis topologies of the specs: a start after every server of a cluster
 * or a Sentinel set is gone (a machine restarted under a run) starts it afresh from empty folders
 * rather than failing on what the last run left, and a stop leaves alone a process that merely
 * reuses a pid it wrote. It runs a topology of its own, on ports and in a folder of its own, and
 * stops every server it started.
 */
import { execFile, execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { answers, TOPOLOGY_SCRIPT } from './support/topology.js'
import { installed } from './support/topology-setup.js'

const CLUSTER = [7200, 7201, 7202, 7203, 7204, 7205]
const SENTINEL_SET = [7210, 7211, 7212, 7213, 7214]
const dir = mkdtempSync(join(tmpdir(), 'echostore-topology-script-'))
const env = { ...process.env, ECHOSTORE_TOPOLOGY_DIR: join(dir, 'servers'), ECHOSTORE_TOPOLOGY_SETS: '7200 7210 echostore-restart', ECHOSTORE_TOPOLOGY_VALKEY_PORT: '' }

/** Runs the script with this spec's settings; resolves with its exit code and what it printed. */
async function script(verb: 'start' | 'stop'): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)('bash', [TOPOLOGY_SCRIPT, verb], { env, timeout: 90_000 })
    return { code: 0, output: stdout + stderr }
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string }
    return { code: failed.code, output: failed.stdout + failed.stderr }
  }
}

/** What `redis-cli` printed for `args` on the server at `port`. */
function redis(port: number, ...args: string[]): string {
  return execFileSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8' })
}

function pidOf(port: number): number {
  return Number(readFileSync(join(env.ECHOSTORE_TOPOLOGY_DIR, String(port), 'pid'), 'utf8').trim())
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Resolves once no server answers on any of the ports. */
async function silent(ports: number[]): Promise<void> {
  while ((await Promise.all(ports.map(answers))).some(Boolean)) await new Promise((resolve) => setImmediate(resolve))
}

const needsServers = installed('redis-server') && installed('redis-cli')
const describeServers = needsServers || process.env.CI === 'true' ? describe : describe.skip

afterAll(async () => {
  await script('stop')
  rmSync(dir, { recursive: true, force: true })
})

describeServers('the topology script', () => {
  it('starts a topology afresh when every one of its servers is gone but their files remain', { timeout: 120_000 }, async () => {
    expect((await script('start')).code).toBe(0)
    // Every server leaves a dump holding keys, as a replica's full sync does.
    for (let i = 0; i < 16; i++) redis(7200, '-c', 'set', `left-behind-${i}`, 'x')
    redis(7210, 'set', 'left-behind', 'x')
    for (const port of [...CLUSTER, 7210, 7211]) redis(port, 'save')
    for (const port of [...CLUSTER, ...SENTINEL_SET]) process.kill(pidOf(port), 'SIGKILL')
    await silent([...CLUSTER, ...SENTINEL_SET])

    const restarted = await script('start')

    expect(restarted).toEqual({ code: 0, output: expect.stringContaining('cluster 127.0.0.1:7200-7205') })
    const info = redis(7200, 'cluster', 'info')
    expect(info).toContain('cluster_state:ok')
    expect(info).toContain('cluster_known_nodes:6')
    expect([...CLUSTER, 7210, 7211].map((port) => redis(port, 'dbsize').trim())).toEqual(Array(8).fill('0'))
  })

  it('stops the servers it started and no process that took over a pid it wrote', { timeout: 60_000 }, async () => {
    const servers = [...CLUSTER, ...SENTINEL_SET].map(pidOf)
    const stranger = spawn(process.execPath, ['-e', 'process.stdin.resume()'], { stdio: ['pipe', 'ignore', 'ignore'] })
    // As after a restart of the machine: the pid file of one sentinel names somebody else's process.
    writeFileSync(join(env.ECHOSTORE_TOPOLOGY_DIR, String(SENTINEL_SET[4]), 'pid'), String(stranger.pid))
    const sentinelPid = servers[CLUSTER.length + 4]!

    expect((await script('stop')).code).toBe(0)

    expect(alive(stranger.pid!)).toBe(true)
    expect(servers.filter((pid) => pid !== sentinelPid).filter(alive)).toEqual([])
    stranger.kill()
    process.kill(sentinelPid, 'SIGTERM')
    await silent([...CLUSTER, ...SENTINEL_SET])
  })
})
