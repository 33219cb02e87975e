/**
 * Runs `fn(0 .. total-1)` with at most `concurrency` calls in flight: that many workers, each
 * awaiting one call at a time and taking the next index.
 */
export async function runConcurrent(total: number, concurrency: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0
  async function worker(): Promise<void> {
    while (next < total) await fn(next++)
  }
  const workers: Promise<void>[] = []
  for (let w = 0; w < Math.min(concurrency, total); w++) workers.push(worker())
  await Promise.all(workers)
}
