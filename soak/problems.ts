/** Samples kept per rule: enough to reproduce, never enough to fill a terminal. */
const SAMPLES = 3

/** Rule breaks seen while the soak ran, by rule: how many, and the first few as text. */
export class Problems {
  readonly #seen = new Map<string, { count: number; samples: string[] }>()

  /** Records one break of `rule`. */
  add(rule: string, sample: string): void {
    let entry = this.#seen.get(rule)
    if (entry === undefined) this.#seen.set(rule, (entry = { count: 0, samples: [] }))
    entry.count++
    if (entry.samples.length < SAMPLES) entry.samples.push(sample)
  }

  /** How many breaks of `rule` were seen. */
  count(rule: string): number {
    return this.#seen.get(rule)?.count ?? 0
  }

  /** `rule`'s count and samples as one line (empty when none). */
  describe(rule: string): string {
    const entry = this.#seen.get(rule)
    return entry === undefined ? '' : `${entry.count.toLocaleString('en-US')} seen, e.g. ${entry.samples.join('; ')}`
  }
}

/** A value, error or id as a short line of text, whatever it is. */
export function show(value: unknown): string {
  if (value instanceof Error) return `${value.name}: ${value.message.slice(0, 160)}`
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}… (${value.length} chars)` : value)
  if (typeof value === 'symbol' || typeof value === 'bigint' || typeof value === 'function') return String(value).slice(0, 60)
  try {
    return JSON.stringify(value)?.slice(0, 160) ?? String(value)
  } catch {
    return Object.prototype.toString.call(value)
  }
}
