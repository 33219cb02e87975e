/**
 * A plain ES module project without ioredis, redis or @opentelemetry/api: the core entry works;
 * echostore/redis imports, and a url there fails naming both clients; importing echostore/otel
 * fails with a message that says what to install.
 */
import { createTable } from 'echostore'
import { assertHerdOfOne } from './herd.mjs'

const table = createTable({ name: 'esm' })
await assertHerdOfOne(table, 'esm')
await table.close()

// echostore/redis loads whichever Redis client is installed: with neither, the import works (a
// client made by the user needs none), and a url is refused naming both install commands.
const { redisL2 } = await import('echostore/redis')
let refused
try {
  redisL2({ url: 'redis://127.0.0.1:6379' })
} catch (error) {
  refused = error
}
if (refused?.code !== 'ECHOSTORE_PEER_MISSING' || !refused.message.includes('npm install ioredis') || !refused.message.includes('npm install redis')) {
  throw new Error(`esm: redisL2({ url }) with neither ioredis nor redis installed should fail naming both, got: ${refused?.message ?? 'no error'}`)
}
console.log(`pass esm: with neither Redis client installed, echostore/redis imports and redisL2({ url }) fails with: ${refused.message}`)

const refusedOtel = await import('echostore/otel').then(
  () => undefined,
  (error) => error,
)
if (refusedOtel?.code !== 'ECHOSTORE_PEER_MISSING' || !refusedOtel.message.includes('npm install @opentelemetry/api')) {
  throw new Error(`esm: importing echostore/otel without @opentelemetry/api should fail saying to install it, got: ${refusedOtel?.message ?? 'no error'}`)
}
console.log(`pass esm: without @opentelemetry/api, importing echostore/otel fails with: ${refusedOtel.message}`)
