import type { Clock, TimerHandle } from '../core/clock.js'

/**
 * The L2 calls made in one turn of the event loop, bounded together. Written only by
 * {@link TurnDeadlines}.
 */
interface Turn {
  /** Each pending call's time-out, until the call settles or times out. */
  readonly calls: Set<() => void>
  /** The clock's first timer after the turn (0 ms), then, once started, the turn's deadline. */
  timer: TimerHandle
  /** The clock's 0 ms timer has run: the clock reached a timer phase after the calls. */
  due: boolean
  /** The turn's promise jobs have all run: no more code of the turn that made the calls. */
  ended: boolean
}

const resolved = Promise.resolve()

/**
 * Calls `run` once every promise job of the current tick has run: a promise job that queues a
 * `process.nextTick`, which Node runs only once the promise job queue is empty.
 */
function afterPromiseJobs(run: () => void): void {
  void resolved.then(() => process.nextTick(run))
}

/**
 * The deadlines of a table's L2 calls, one per turn: a call's `timeout` counts from the end of the
 * turn that made it, not from the call, because a client may write the turn's commands only then
 * (node-redis writes them in a `setImmediate`), so a call made early in a long busy turn would run
 * out of time before its request left. The calls of one turn share one timer on the table's clock:
 * a 0 ms timer that marks the turn's end (on the system clock it runs in the first timer phase after
 * the turn), then the deadline, `timeout` ms after whichever came later of that timer and the end of
 * the turn's promise jobs (a manual clock moved inside the turn runs timers before it has ended).
 * When the deadline fires, the calls still pending time out after the next I/O poll (`setImmediate`
 * runs after it), so an answer received while the event loop was busy lands first.
 */
export class TurnDeadlines {
  /** The turn new calls join: the current one's, until its promise jobs have run or its calls have all settled. Written only by {@link bound} and a turn's ending. */
  #current: Turn | undefined

  constructor(
    private readonly clock: Clock,
    private readonly timeout: number,
  ) {}

  /**
   * Bounds one call made now: `timeOut` runs once the call's turn has ended and its deadline has
   * passed, unless the returned function (the call settled) is called first.
   */
  bound(timeOut: () => void): () => void {
    const turn = this.#current ?? this.#open()
    turn.calls.add(timeOut)
    return () => {
      if (!turn.calls.delete(timeOut) || turn.calls.size > 0) return
      this.clock.clearTimeout(turn.timer)
      if (this.#current === turn) this.#current = undefined
    }
  }

  /** A new turn of calls, current until its promise jobs have run. */
  #open(): Turn {
    const turn: Turn = { calls: new Set(), timer: undefined, due: false, ended: false }
    turn.timer = this.clock.setTimeout(() => {
      turn.due = true
      this.#start(turn)
    }, 0)
    afterPromiseJobs(() => {
      if (this.#current === turn) this.#current = undefined
      turn.ended = true
      this.#start(turn)
    })
    return (this.#current = turn)
  }

  /** Arms the turn's deadline once both its 0 ms timer has run and the turn has ended, if a call still waits. */
  #start(turn: Turn): void {
    if (!turn.due || !turn.ended || turn.calls.size === 0) return
    turn.timer = this.clock.setTimeout(
      () =>
        setImmediate(() => {
          for (const timeOut of [...turn.calls]) timeOut()
        }),
      this.timeout,
    )
  }
}
