/**
 * `npm test` asks whether the Redis topologies are up before it starts them: a normal run, where
 * nothing listens on their ports yet, prints no connection error.
 */
import { execFile } from 'node:child_process'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'

/** A TCP port nobody listens on (bound, read, released). */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

it('asking a port where no Redis listens answers false and prints nothing', async () => {
  const setup = pathToFileURL(join(import.meta.dirname, 'support', 'topology-setup.ts')).href
  const script = `const { up } = await import(${JSON.stringify(setup)}); console.log(JSON.stringify(up(${await freePort()})))`
  const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: join(import.meta.dirname, '..') })
  expect({ stdout: stdout.trim(), stderr }).toEqual({ stdout: 'false', stderr: '' })
})
