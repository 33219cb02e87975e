/**
 * A CommonJS project without ioredis or @opentelemetry/api: `require('echostore')` loads the
 * CommonJS build, and requiring echostore/redis or echostore/otel fails with a message that says
 * what to install.
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
    require('echostore/redis')
  } catch (error) {
    refused = error
  }
  if (refused?.code !== 'ECHOSTORE_PEER_MISSING' || !refused.message.includes('npm install ioredis')) {
    throw new Error(`cjs: requiring echostore/redis without ioredis should fail saying to install ioredis, got: ${refused?.message ?? 'no error'}`)
  }
  console.log('pass cjs: without ioredis, requiring echostore/redis fails with the install-ioredis message')

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
