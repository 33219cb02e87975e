/**
 * A plain ES module project without ioredis: the core entry works, and importing echostore/redis
 * fails with a message that says how to install ioredis.
 */
import { createTable } from 'echostore'
import { assertHerdOfOne } from './herd.mjs'

const table = createTable({ name: 'esm' })
await assertHerdOfOne(table, 'esm')
await table.close()

const refused = await import('echostore/redis').then(
  () => undefined,
  (error) => error,
)
if (refused?.code !== 'ECHOSTORE_PEER_MISSING' || !refused.message.includes('npm install ioredis')) {
  throw new Error(`esm: importing echostore/redis without ioredis should fail saying to install ioredis, got: ${refused?.message ?? 'no error'}`)
}
console.log(`pass esm: without ioredis, importing echostore/redis fails with: ${refused.message}`)
