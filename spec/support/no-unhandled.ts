import { afterEach } from 'vitest'

// Any unhandled rejection fails the test during which it surfaced (vitest also fails the run).
const seen: unknown[] = []
process.on('unhandledRejection', (reason) => {
  seen.push(reason)
})

afterEach(async () => {
  // Let pending rejections surface before judging the test.
  await new Promise((resolve) => setImmediate(resolve))
  if (seen.length > 0) {
    const reasons = seen.splice(0)
    throw new Error(`unhandled rejection(s) during this test: ${reasons.map(String).join('; ')}`)
  }
})
