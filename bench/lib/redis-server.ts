import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import { Redis } from 'ioredis'
import { sleep } from './sleep.js'

/** A redis-server the bench started for itself (no persistence, loopback only), stopped by its pid. */
export interface OwnRedis {
  url: string
  port: number
  stop(): Promise<void>
}

/** A free TCP port on loopback, as the OS hands one out. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}

/**
 * Starts `redis-server` on `port` (or a free one) and waits until it answers PING (10 s at most).
 * Resolves undefined when the binary is not installed.
 */
export async function startOwnRedis(port?: number): Promise<OwnRedis | undefined> {
  const chosen = port ?? (await freePort())
  let proc: ChildProcess
  try {
    proc = spawn('redis-server', ['--port', String(chosen), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'], { stdio: 'ignore' })
  } catch {
    return undefined
  }
  const failed = await new Promise<boolean>((resolve) => {
    proc.once('error', () => resolve(true))
    proc.once('spawn', () => resolve(false))
  })
  if (failed) return undefined
  const url = `redis://127.0.0.1:${chosen}`
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
  probe.on('error', () => {})
  let up = false
  for (let waited = 0; waited < 10_000 && !up && proc.exitCode === null; waited += 50) {
    try {
      await probe.connect()
      up = (await probe.ping()) === 'PONG'
    } catch {
      await sleep(50)
    }
  }
  probe.disconnect()
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return
    const exited = new Promise((resolve) => proc.once('exit', resolve))
    proc.kill('SIGTERM')
    await Promise.race([exited, sleep(3_000)])
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL')
  }
  if (!up) {
    await stop()
    throw new Error(`redis-server on port ${chosen} did not answer PING within 10 s`)
  }
  return { url, port: chosen, stop }
}
