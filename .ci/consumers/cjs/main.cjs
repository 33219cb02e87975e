/**
 * A CommonJS project without ioredis, redis or @opentelemetry/api: `require('echostore')` loads the
 * CommonJS build; echostore/redis requires, and a url there fails naming both clients; requiring
 * echostore/otel fails with a message that says what to install.
 */
const { createTable } = require('echostore')

async function main() {
  const { assertHerdOfOne } = await import('./herd.mjs')
  if (!require.resolve('echostore').includes('/dist/commonjs/')) throw new Error(`cjs: require('echostore') resolved to ${require.resolve('echostore')}, not the CommonJS build`)
  const table = createTable({ name: 'cjs' })
  await assertHerdOfOne(table, 'cjs')
  await table.close()

  let refused
  try {
    require('echostore/redis').redisL2({ url: 'redis://127.0.0.1:6379' })
  } catch (error) {
    refused = error
  }
  if (refused?.code !== 'ECHOSTORE_PEER_MISSING' || !refused.message.includes('npm install ioredis') || !refused.message.includes('npm install redis')) {
    throw new Error(`cjs: redisL2({ url }) with neither ioredis nor redis installed should fail naming both, got: ${refused?.message ?? 'no error'}`)
  }
  console.log('pass cjs: with neither Redis client installed, echostore/redis requires and redisL2({ url }) fails naming both install commands')

  let refusedOtel
  try {
    require('echostore/otel')
  } catch (error) {
    refusedOtel = error
  }
  if (refusedOtel?.code !== 'ECHOSTORE_PEER_MISSING' || !refusedOtel.message.includes('npm install @opentelemetry/api')) {
    throw new Error(`cjs: requiring echostore/otel without @opentelemetry/api should fail saying to install it, got: ${refusedOtel?.message ?? 'no error'}`)
  }
  console.log('pass cjs: without @opentelemetry/api, requiring echostore/otel fails with the install message')
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
