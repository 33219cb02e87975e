/**
 * A CommonJS project without ioredis: `require('echostore')` loads the CommonJS build, and
 * requiring echostore/redis fails with a message that says how to install ioredis.
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
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
