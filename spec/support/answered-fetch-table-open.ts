/**
 * A script whose table answered one fetch and is never closed. Its flights' deadline timer is left
 * set in the background (for the next flight), so nothing keeps Node alive: the process exits at
 * once, not after `loadTimeout` (60 s here, past `runAlone`'s 20 s limit).
 */
import { createTable } from '../../src/index.js'

const table = createTable<string>({ loadTimeout: 60_000 })
console.log(`answered ${await table.fetch('a', async () => 'A')}`)
