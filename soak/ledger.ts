/**
 * Every promise the soak creates (the calls it makes, the loaders it hands the tables), by kind: a
 * promise still pending once the run has drained was lost.
 */
export class PromiseLedger {
  readonly #made = new Map<string, number>()
  readonly #pending = new Map<Promise<unknown>, string>()

  /** Records `promise` under `kind` and returns it unchanged (the caller still handles its outcome). */
  track<T>(kind: string, promise: Promise<T>): Promise<T> {
    this.#made.set(kind, (this.#made.get(kind) ?? 0) + 1)
    this.#pending.set(promise, kind)
    const settled = () => void this.#pending.delete(promise)
    promise.then(settled, settled)
    return promise
  }

  /** Promises made, by kind. */
  made(): Record<string, number> {
    return Object.fromEntries(this.#made)
  }

  /** Promises still pending, by kind (empty when none). */
  pending(): Record<string, number> {
    const out: Record<string, number> = {}
    for (const kind of this.#pending.values()) out[kind] = (out[kind] ?? 0) + 1
    return out
  }

  /** How many promises are still pending. */
  get open(): number {
    return this.#pending.size
  }

  /**
   * Resolves once every promise recorded so far, and any recorded meanwhile, has settled: true. Gives
   * up, false, once `quietMs` pass without any of them settling (the rest are stuck, not slow).
   */
  async drained(quietMs: number): Promise<boolean> {
    while (this.#pending.size > 0) {
      const before = this.#pending.size
      let timer: NodeJS.Timeout | undefined
      const quiet = new Promise<void>((resolve) => (timer = setTimeout(resolve, quietMs)))
      await Promise.race([Promise.allSettled([...this.#pending.keys()]), quiet])
      clearTimeout(timer)
      if (this.#pending.size >= before) return false
    }
    return true
  }
}
