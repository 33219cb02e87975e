import { describe, expect, it } from 'vitest'
import { parseResult, runExample } from './support/run-example.js'

describe('examples/namespaces.ts', () => {
  it("shops as namespaces of one table: a shop's clear reloads its rows only; a supplier's tag reaches every shop from the base, one shop from its namespace", async () => {
    const run = await runExample('namespaces.ts')
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain('loads so far: 6 (the same skus in two shops are two rows)')
    expect(run.stdout).toContain('north cleared: 3 reloads (north/drill-18v, north/saw-blade, north/ladder)')
    expect(run.stdout).toContain('supplier:makita invalidated for every shop: 2 reloads (north/drill-18v, south/drill-18v)')
    expect(run.stdout).toContain('supplier:bosch invalidated for the south only: 1 reload (south/saw-blade)')
    expect(parseResult(run.stdout)).toEqual({ loads: 12, size: 6, tagInvalidations: 3, sameAsShop: true })
  })
})
