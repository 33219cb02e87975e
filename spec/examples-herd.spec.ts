import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)

describe('npm start: the herd demo', () => {
  it('runs to completion off a terminal, printing plain lines, and its summary tells what the counters measured', async () => {
    const { REDIS_URL: _withoutRedis, ...inherited } = process.env
    const env = { ...inherited, DEMO_SCALE: '0.3' }
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'examples/herd.ts'], { env, timeout: 60_000 })
    expect(stdout).not.toContain('\x1b[') // no redrawing escape codes in a pipe
    expect(stdout).toContain('L2: none')
    expect(stdout).toMatch(/herd of 200 cold readers:\s+1 load, 199 coalesced, every reader got the same object \(true\)/)
    const spread = (jitter: string) => {
      const match = stdout.match(new RegExp(`cohort of 400 at jitter ${jitter}:\\s+re-loads spread over (\\d+) ms, peak (\\d+) loads`))
      expect(match).not.toBeNull()
      return { spread: Number(match![1]), peak: Number(match![2]) }
    }
    const flat = spread('0')
    const jittered = spread('0.2')
    expect(jittered.spread).toBeGreaterThan(300) // the band is 800–1200 ms
    expect(jittered.peak).toBeLessThan(flat.peak)
    const ttl = stdout.match(/ttl 1000 ms → hit rate ([\d.]+)% .* ttl 20 ms → hit rate ([\d.]+)%/)
    expect(ttl).not.toBeNull()
    expect(Number(ttl![2])).toBeLessThan(Number(ttl![1]))
  })
})
