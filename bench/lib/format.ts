/** A table for the readout and BENCHMARKS.md. */
export interface Table {
  caption?: string
  headers: string[]
  rows: string[][]
}

/** One workload's part of the report. */
export interface Section {
  id: string
  title: string
  /** What was measured and how, in a sentence or two. */
  method: string
  tables: Table[]
  notes: string[]
}

/** A number with at most `digits` decimals and thousands separators. */
export function num(value: number, digits = 0): string {
  if (!Number.isFinite(value)) return 'n/a'
  return value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
}

/** A number with three significant figures (for ratios, µs, ns). */
export function sig(value: number): string {
  if (!Number.isFinite(value)) return 'n/a'
  const abs = Math.abs(value)
  if (abs >= 1000) return num(value, 0)
  if (abs >= 100) return num(value, 0)
  if (abs >= 10) return num(value, 1)
  if (abs >= 0.1) return num(value, 2)
  return value.toPrecision(2)
}

/** A share in [0, 1] as a percentage with one decimal, e.g. `58.4 %`. */
export function percent(share: number): string {
  return `${num(share * 100, 1)} %`
}

/** A ratio to a floor, e.g. `1.23×`. */
export function ratio(value: number, floor: number): string {
  return floor > 0 && Number.isFinite(value) && Number.isFinite(floor) ? `${sig(value / floor)}×` : 'n/a'
}

/** `±x%` for a repetition spread. */
export function pm(pct: number): string {
  return `±${pct < 10 ? pct.toFixed(1) : pct.toFixed(0)}%`
}

/** A Markdown table, padded so it also reads well in a terminal. */
export function renderTable(table: Table): string {
  const widths = table.headers.map((h, i) => Math.max(h.length, ...table.rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`
  const out: string[] = []
  if (table.caption !== undefined) out.push(table.caption, '')
  out.push(line(table.headers), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`)
  for (const row of table.rows) out.push(line(row))
  return out.join('\n')
}

/** A section as Markdown: heading, method, tables, notes. */
export function renderSection(section: Section): string {
  const parts = [`## ${section.id}: ${section.title}`, '', section.method, '']
  for (const table of section.tables) parts.push(renderTable(table), '')
  for (const note of section.notes) parts.push(`- ${note}`)
  if (section.notes.length > 0) parts.push('')
  return parts.join('\n')
}
