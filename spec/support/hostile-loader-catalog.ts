/**
 * The hostile-loader catalog in a process of its own, on the system clock, where nothing but the
 * table keeps Node alive: every fetch settles, no flight is left, and `close()` resolves.
 */
import { createTable } from '../../src/index.js'
import { HOSTILE_LOADERS } from './hostile-loaders.js'

const table = createTable<unknown>({ loadTimeout: 100 })
await Promise.allSettled(HOSTILE_LOADERS.map(([name, make]) => table.fetch(name, make(table))))
const controller = new AbortController()
const hung = () => new Promise<never>(() => {})
// The flight its two waiters leave runs on to its bound (`loadTimeout`) and then fails: its `error` event is the latch.
const ended = new Promise<void>((resolve) => table.events.on('error', ({ id }) => id === 'left' && resolve()))
const left = [table.fetch('left', hung, { signal: controller.signal }), table.fetch('left', hung, { timeout: 10 })]
controller.abort(new Error('left'))
await Promise.allSettled(left)
await ended
console.log(`inflight ${table.stats().inflight}`)
await table.close()
console.log('closed')
