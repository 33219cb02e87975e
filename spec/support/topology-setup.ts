/**
 * vitest's global setup: starts the cluster and Sentinel set (`.ci/redis-topology.sh start`) when
 * they are not up and `redis-server` is installed, and stops them after the run if it started them.
 * CI starts them itself before the tests, so it leaves them alone.
 */
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'

const script = join(import.meta.dirname, '..', '..', '.ci', 'redis-topology.sh')

/** True when `command` is on the PATH. */
export function installed(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** True when something answers PING on the port; prints nothing either way (a port nobody listens on is the usual case). */
export function up(port: number): boolean {
  try {
    return execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'ping'], { encoding: 'utf8', timeout: 2_000, stdio: ['ignore', 'pipe', 'ignore'] }).includes('PONG')
  } catch {
    return false
  }
}

let started = false

export function setup(): void {
  if (!installed('redis-server') || !installed('redis-cli') || (up(7100) && up(7112) && up(7130) && up(7142))) return
  execFileSync('bash', [script, 'start'], { stdio: 'inherit', timeout: 120_000 })
  started = true
}

export function teardown(): void {
  if (started) execFileSync('bash', [script, 'stop'], { stdio: 'inherit', timeout: 60_000 })
}
