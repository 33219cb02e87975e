/**
 * A timer that bounds a caller's pending promise keeps the process alive: a fetch whose loader
 * never settles, in a script where nothing else keeps Node alive, rejects with `LoadTimeoutError`
 * instead of the process exiting under it; background timers (the sweeper) never keep it alive.
 */
import { describe, expect, it } from 'vitest'
import { runAlone } from './support/run-alone.js'

describe('a fetch whose loader never settles, alone in a process', () => {
  it('rejects with LoadTimeoutError, then the process exits on its own with code 0', async () => {
    const run = await runAlone('never-settling-loader.ts')
    expect(run.stdout).toContain('rejected with LoadTimeoutError')
    expect(run.stdout).toContain('closed')
    expect(run.code).toBe(0)
  })
})
