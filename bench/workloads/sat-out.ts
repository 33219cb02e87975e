import type { Section } from '../lib/format.js'

/** A contender that sat a workload out, and why. */
export interface SatOut {
  name: string
  why: string
}

/**
 * Adds a row to the section's first per-contender table (first column `contender` or `series`)
 * for every contender that sat the workload out, saying why, so the table shows the skip. A
 * section without such a table (W8 measures EchoStore alone) is left as it is.
 */
export function markSatOut(section: Section, satOut: readonly SatOut[]): void {
  const table = section.tables.find((t) => t.headers[0] === 'contender' || t.headers[0] === 'series')
  if (table === undefined) return
  for (const c of satOut) table.rows.push([c.name, `not run: ${c.why}`, ...table.headers.slice(2).map(() => '—')])
}
