/** What `call` threw, typed as an error with EchoStore's fields; fails the test when it threw nothing. */
export function refusal(call: () => unknown): Error & { code?: string; input?: unknown } {
  try {
    call()
  } catch (error) {
    return error as Error
  }
  throw new Error('expected a refusal')
}
