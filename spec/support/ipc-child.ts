/**
 * The parent's side of a child process driven over IPC, for the multi-process specs: commands
 * carry a `seq` and get one `reply`; every other report is an event the spec can wait for. Every
 * wait has a deadline that fails the test with what it was waiting for.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** The repository root, where children run. */
const root = fileURLToPath(new URL('../..', import.meta.url))

/** Rejects with `what` once `ms` have passed, unless `promise` settles first. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms)
  })
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer))
}

/** What every child reports besides its own events. */
export type BaseReport = { type: 'ready'; pid: number } | { type: 'reply'; seq: number; ok: true; result: unknown } | { type: 'reply'; seq: number; ok: false; error: string }

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never

/** A child running `script` (a TypeScript file, under tsx) with `config` as its one argument. */
export class IpcChild<Command extends { seq: number; op: string }, Event extends { type: string }> {
  readonly events: Event[] = []
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  readonly ready: Promise<void>
  readonly child: ChildProcess
  #seq = 0
  readonly #replies = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>()
  #watchers: { match(event: Event): boolean; resolve(event: Event): void }[] = []

  constructor(
    readonly label: string,
    script: string,
    config: unknown,
    /** Most any one step (a reply, an event) may take before the test fails. */
    readonly stepDeadlineMs: number,
  ) {
    this.child = spawn(process.execPath, ['--import', 'tsx', script, JSON.stringify(config)], { cwd: root, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    let markReady!: () => void
    this.ready = new Promise((resolve) => (markReady = resolve))
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })))
    this.exited.then(() => {
      for (const pending of this.#replies.values()) pending.reject(new Error(`${this.label} exited`))
      this.#replies.clear()
    })
    this.child.on('message', (message: BaseReport | Event) => {
      if (message.type === 'ready') return markReady()
      if (message.type === 'reply') {
        const reply = message as Extract<BaseReport, { type: 'reply' }>
        const pending = this.#replies.get(reply.seq)
        this.#replies.delete(reply.seq)
        if (reply.ok) pending?.resolve(reply.result)
        else pending?.reject(new Error(`${this.label}: ${reply.error}`))
        return
      }
      const event = message as Event
      this.events.push(event)
      this.#watchers = this.#watchers.filter((w) => {
        if (!w.match(event)) return true
        w.resolve(event)
        return false
      })
    })
  }

  /** Sends `command` and resolves with its reply's result (rejects with the child's error, or when it exits first). */
  request<T>(command: DistributiveOmit<Command, 'seq'>, deadlineMs = this.stepDeadlineMs): Promise<T> {
    const seq = ++this.#seq
    const answer = new Promise<T>((resolve, reject) => {
      this.#replies.set(seq, { resolve: resolve as (value: unknown) => void, reject })
    })
    this.child.send({ ...command, seq })
    return within(answer, deadlineMs, `${this.label} answering ${command.op}`)
  }

  /** The first event (already reported or still to come) that matches. */
  event<E extends Event>(match: (event: Event) => event is E, what: string): Promise<E> {
    const seen = this.events.find(match)
    if (seen !== undefined) return Promise.resolve(seen as E)
    const next = new Promise<E>((resolve) => this.#watchers.push({ match, resolve: resolve as (event: Event) => void }))
    return within(next, this.stepDeadlineMs, `${this.label}: ${what}`)
  }

  /** True while the child runs. */
  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null
  }
}
