/**
 * A timer that bounds a caller's pending promise keeps the process alive: a fetch whose loader
 * never settles, in a script where nothing else keeps Node alive, rejects with `LoadTimeoutError`
 * instead of the process exiting under it; background timers (the sweeper) never keep it alive.
 */
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))
const script = fileURLToPath(new URL('./support/never-settling-loader.ts', import.meta.url))

describe('a fetch whose loader never settles, alone in a process', () => {
  it('rejects with LoadTimeoutError, then the process exits on its own with code 0', async () => {
    const run = await new Promise<{ code: number; stdout: string }>((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', script], { cwd: root, timeout: 20_000 }, (error, stdout) => {
        resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout })
      })
    })
    expect(run.stdout).toContain('rejected with LoadTimeoutError')
    expect(run.stdout).toContain('closed')
    expect(run.code).toBe(0)
  })
})
