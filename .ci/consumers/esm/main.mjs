/**
 * A plain ES module project without ioredis or @opentelemetry/api: the core entry works, and
 * importing echostore/redis or echostore/otel fails with a message that says what to install.
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

const refusedOtel = await import('echostore/otel').then(
  () => undefined,
  (error) => error,
)
if (refusedOtel?.code !== 'ECHOSTORE_PEER_MISSING' || !refusedOtel.message.includes('npm install @opentelemetry/api')) {
  throw new Error(`esm: importing echostore/otel without @opentelemetry/api should fail saying to install it, got: ${refusedOtel?.message ?? 'no error'}`)
}
console.log(`pass esm: without @opentelemetry/api, importing echostore/otel fails with: ${refusedOtel.message}`)
