/**
 * Time for the examples that run on a manual clock: it moves only when told, a millisecond at a
 * time, letting what came due run after each step, as real time would; so they print the same on
 * every run.
 */
import type { ManualClock } from 'echostore/testing'

/** How an example moves `clock`: `turn` lets promise jobs and deferred work run; `advance` moves it `ms`; `settled` moves it until `reads` settle. */
export function manualTime(clock: ManualClock) {
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve))
  async function advance(ms: number): Promise<void> {
    for (let i = 0; i < ms; i++) {
      clock.advance(1)
      await turn()
    }
  }
  /** Moves the clock 1 ms at a time until `reads` have settled (at most 10 s of clock time), and answers what they settled to. */
  async function settled<T>(reads: Promise<T>): Promise<T> {
    let done = false
    void reads.finally(() => (done = true))
    await turn()
    for (let waited = 0; !done && waited < 10_000; waited++) await advance(1)
    return reads
  }
  return { turn, advance, settled }
}
