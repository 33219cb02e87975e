/**
 * A script whose table answered one fetch and is never closed: nothing the table holds (its
 * sweeper, its flights' deadline timer, gone with the last flight) keeps Node alive, so the process
 * exits at once, not after `loadTimeout` (60 s here, past `runAlone`'s 20 s limit).
 */
import { createTable } from '../../src/index.js'

const table = createTable<string>({ loadTimeout: 60_000 })
console.log(`answered ${await table.fetch('a', async () => 'A')}`)
