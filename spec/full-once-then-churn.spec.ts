/**
 * A table's memory is bounded by its capacity whatever it went through: one that was full once (its
 * eviction hand went round) and then runs below its capacity with steady churn retains nothing per
 * fill. Measured in a process of its own with full collections (spec/support/full-once-child.ts).
 */
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))
const child = fileURLToPath(new URL('./support/full-once-child.ts', import.meta.url))

describe('a table full once, then churning below its capacity', () => {
  it('retains no heap per fill (100,000 fills of new ids)', async () => {
    const out = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ['--expose-gc', '--import', 'tsx', child], { cwd: root, timeout: 120_000 }, (error, stdout, stderr) =>
        error === null ? resolve(stdout) : reject(new Error(`${error.message}\n${stderr}`)),
      ),
    )
    const { bytesPerFill, evicted, largest, capacity } = JSON.parse(out) as { bytesPerFill: number; evicted: number; largest: number; capacity: number }
    expect(evicted).toBeGreaterThan(0) // it was full once: its hands went round
    expect(largest).toBeLessThan(capacity) // and below its capacity since
    expect(bytesPerFill).toBeLessThan(8) // before, each fill kept ~66 B: the maps' old tables, held by a parked hand
  }, 150_000)
})
