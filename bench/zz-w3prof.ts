import { createTable } from '../src/index.js'
import { runConcurrent } from './lib/pool.js'
import { makeIds } from './lib/random.js'
import { RESOLVED } from './lib/row.js'
import { collect } from './lib/gc.js'
const n = 100_000
for (let rep = 0; rep < 6; rep++) {
  const ids = makeIds(`cold${rep}-`, n)
  const warm = makeIds(`warm${rep}-`, 20_000)
  const t = createTable<unknown>({ ttl: 600_000, capacity: n + 20_000 })
  const loader = () => RESOLVED
  await runConcurrent(20_000, 64, (i) => t.fetch(warm[i]!, loader))
  collect()
  const s = performance.now()
  await runConcurrent(n, 64, (i) => t.fetch(ids[i]!, loader))
  console.log(((n * 1000) / (performance.now() - s)) | 0)
  await t.close()
}
