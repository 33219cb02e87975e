import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { COUNTER_NAMES } from '../src/index.js'

const root = join(import.meta.dirname, '..')

describe('examples/metrics.ts --once', () => {
  it('serves /metrics, prints a scrape with every counter of both tables, and exits by itself', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/metrics.ts', '--once'], {
      cwd: root,
      env: { ...process.env, PORT: '0' },
      timeout: 15_000,
    })
    expect(stdout).toMatch(/^serving http:\/\/127\.0\.0\.1:\d+\/metrics/)
    const scrape = new Map<string, number>()
    for (const match of stdout.matchAll(/^ {2}(echostore_\w+\{table="\w+"\}) (\S+)$/gm)) scrape.set(match[1]!, Number(match[2]))
    const result = JSON.parse(/^RESULT (.*)$/m.exec(stdout)![1]!) as {
      issued: Record<'emoji_sets' | 'catalog', number>
      emoji_sets: Record<string, number>
      catalog: Record<string, number>
    }
    for (const table of ['emoji_sets', 'catalog'] as const) {
      for (const name of COUNTER_NAMES) expect(scrape.has(`echostore_${name}_total{table="${table}"}`), `${name} of ${table}`).toBe(true)
      for (const name of ['size', 'inflight', 'hit_rate']) expect(scrape.has(`echostore_${name}{table="${table}"}`), `${name} of ${table}`).toBe(true)
      const get = (name: string) => scrape.get(`echostore_${name}_total{table="${table}"}`)
      // The scrape was taken after the last read: the read counters are final.
      expect(get('hits')! + get('misses')!).toBe(result.issued[table])
      for (const name of ['hits', 'misses', 'coalesced', 'flights', 'loads', 'fills']) expect(get(name), name).toBe(result[table][name])
      expect(get('misses')).toBe(get('flights')! + get('coalesced')!)
      expect(scrape.get(`echostore_inflight{table="${table}"}`)).toBe(0)
    }
    expect(scrape.get('echostore_coalesced_total{table="emoji_sets"}')).toBeGreaterThan(0)
    expect(stdout).toContain('stopped after 100 rounds')
  })
})
