/**
 * A script where nothing but one pending fetch keeps Node alive: its loader never settles. The
 * fetch must reject with `LoadTimeoutError` (the timer bounding it keeps the process alive until
 * then), and the process exit on its own once the table is closed.
 */
import { LoadTimeoutError, createTable } from '../../src/index.js'

const table = createTable<string>({ loadTimeout: 200 })
try {
  await table.fetch('a', () => new Promise<string>(() => {}))
  console.log('resolved')
} catch (error) {
  console.log(error instanceof LoadTimeoutError ? 'rejected with LoadTimeoutError' : `rejected with ${String(error)}`)
}
await table.close()
console.log('closed')
