import { spawn, type ChildProcess } from 'node:child_process'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import type { Redis } from 'ioredis'
import type { SharedRedis } from '../contenders/day/types.js'
import { num } from '../lib/format.js'
import { progress } from '../lib/progress.js'
import type { DayReport, FromDayChild, ToDayChild } from '../w12-day-child.js'
import { Origin, type OriginFigures } from './w12-origin.js'
import type { DayPlan } from './w12-trace.js'

/** Bounds: a child's start-up (tsx compiles on first import), the day's end after its last event, a child's exit. */
const READY_TIMEOUT_MS = 60_000
const DAY_SLACK_MS = 30_000
const EXIT_TIMEOUT_MS = 5_000
/** The day starts this long after the parent says go, so every child starts on the same instant. */
const START_DELAY_MS = 250

/** One contender's day in one shape: what each instance reported, what the origin saw, and Redis's counts. */
export interface DayRun {
  reports: DayReport[]
  origin: OriginFigures
  /** INFO commandstats delta over the day (the INFO calls themselves left out), by command; empty without Redis. */
  redisCommands: Map<string, number>
  /** Redis server CPU (used_cpu_user + used_cpu_sys) over the day, ms; NaN without Redis. */
  redisCpuMs: number
  /** How each child ended. */
  ends: string[]
  /** The machine's 1-minute load average as the day ended (other processes included). */
  loadAverage: number
}

/** What a day needs besides its plan. */
export interface DayRequest {
  label: string
  contender: string
  variant: number
  instances: number
  full: boolean
  capacity: number
  grace: number
  loadDeadline: number
  root: string
  /** When set, each child runs under `--cpu-prof` and writes its profiles (one per thread: the largest is the main thread's) in a folder `W12-<contender>-v<variant>-<instances>x-<instance>` here. */
  cpuProfDir?: string
  /** The shared Redis of the four-instance shape, with an admin connection to read its counters. */
  redis?: { shared: SharedRedis; admin: Redis }
}

/** One child process of a day: its IPC channel, failing loudly when the child dies. */
class DayChild {
  readonly proc: ChildProcess
  private stderr = ''
  private gone: Error | undefined
  private readonly listeners = new Set<(m: FromDayChild | Error) => void>()
  readonly exited: Promise<string>

  constructor(root: string, profile?: { dir: string; name: string }) {
    const prof = profile !== undefined ? ['--cpu-prof', `--cpu-prof-dir=${join(profile.dir, profile.name)}`] : []
    this.proc = spawn(process.execPath, [...prof, '--import', 'tsx', 'bench/w12-day-child.ts'], { cwd: root, stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'advanced' })
    this.proc.stderr!.setEncoding('utf8')
    this.proc.stderr!.on('data', (chunk: string) => (this.stderr = (this.stderr + chunk).slice(-4_000)))
    this.proc.on('message', (m: FromDayChild) => this.listeners.forEach((l) => l(m)))
    this.exited = new Promise((resolve) =>
      this.proc.on('exit', (code, signal) => {
        this.gone ??= new Error(`W12 child ${this.proc.pid} exited (${code ?? signal})${this.stderr ? `: ${this.stderr.trim()}` : ''}`)
        this.listeners.forEach((l) => l(this.gone!))
        resolve(code === 0 ? 'exit 0' : `exit ${code ?? signal}`)
      }),
    )
  }

  on(listener: (m: FromDayChild | Error) => void): void {
    this.listeners.add(listener)
  }

  send(message: ToDayChild): void {
    if (this.proc.connected) this.proc.send(message)
  }

  /** The next message of `type` within `ms`; rejects on a `failed` message, the child's exit or the bound. */
  next<T extends FromDayChild['type']>(type: T, ms: number): Promise<Extract<FromDayChild, { type: T }>> {
    return new Promise((resolve, reject) => {
      if (this.gone !== undefined) return reject(this.gone)
      const timer = setTimeout(() => done(new Error(`W12 child ${this.proc.pid}: no "${type}" within ${ms} ms${this.stderr ? `; stderr: ${this.stderr.trim()}` : ''}`)), ms)
      const listener = (m: FromDayChild | Error) => {
        if (m instanceof Error) done(m)
        else if (m.type === 'failed') done(new Error(`W12 child ${this.proc.pid} failed: ${m.message}`))
        else if (m.type === type) done(undefined, m as Extract<FromDayChild, { type: T }>)
      }
      const done = (error?: Error, m?: Extract<FromDayChild, { type: T }>) => {
        clearTimeout(timer)
        this.listeners.delete(listener)
        if (error !== undefined) reject(error)
        else resolve(m!)
      }
      this.on(listener)
    })
  }

  /** Asks it to exit; SIGKILLs it past EXIT_TIMEOUT_MS. */
  async stop(): Promise<string> {
    this.send({ type: 'exit' })
    const end = await Promise.race([this.exited, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), EXIT_TIMEOUT_MS).unref())])
    if (end !== undefined) return end
    this.proc.kill('SIGKILL')
    await this.exited
    return `killed after ${EXIT_TIMEOUT_MS} ms`
  }
}

/** `INFO commandstats` as calls by command. */
async function commandCalls(admin: Redis): Promise<Map<string, number>> {
  const out = new Map<string, number>()
  for (const line of (await admin.info('commandstats')).split(/\r?\n/)) {
    const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(line)
    if (m !== null) out.set(m[1]!, Number(m[2]))
  }
  return out
}

/** Redis server CPU so far, ms. */
async function serverCpuMs(admin: Redis): Promise<number> {
  const info = await admin.info('cpu')
  const field = (name: string) => Number(new RegExp(`${name}:([0-9.]+)`).exec(info)?.[1] ?? Number.NaN)
  return (field('used_cpu_user') + field('used_cpu_sys')) * 1000
}

/**
 * Runs one contender's day: spawns its instances, builds their caches, starts them on one instant,
 * serves their origin calls and updates from one {@link Origin}, prints a progress line each second
 * of the day, and collects their reports.
 */
export async function runDay(plan: DayPlan, req: DayRequest): Promise<DayRun> {
  const profileName = (i: number) => `W12-${req.contender.replace(/[^a-z0-9-]/gi, '_')}-v${req.variant}-${req.instances}x-${i}`
  const children = Array.from({ length: req.instances }, (_, i) => new DayChild(req.root, req.cpuProfDir !== undefined ? { dir: req.cpuProfDir, name: profileName(i) } : undefined))
  const ends: string[] = []
  try {
    children.forEach((c, instance) =>
      c.send({
        type: 'setup',
        contender: req.contender,
        variant: req.variant,
        instance,
        instances: req.instances,
        full: req.full,
        capacity: req.capacity,
        grace: req.grace,
        loadDeadline: req.loadDeadline,
        ...(req.redis !== undefined ? { redis: req.redis.shared } : {}),
      }),
    )
    const spawned = performance.now()
    await Promise.all(children.map((c) => c.next('ready', READY_TIMEOUT_MS)))
    progress(`${req.label} · ${req.instances} process${req.instances > 1 ? 'es' : ''} ready in ${num(performance.now() - spawned)} ms`)
    const before = req.redis !== undefined ? await commandCalls(req.redis.admin) : new Map<string, number>()
    const cpuBefore = req.redis !== undefined ? await serverCpuMs(req.redis.admin) : Number.NaN
    const t0 = performance.timeOrigin + performance.now() + START_DELAY_MS
    const origin = new Origin(plan, t0)
    for (const c of children) {
      c.on((m) => {
        if (m instanceof Error) return
        if (m.type === 'origin') {
          origin.read(m.key).then(
            (row) => c.send({ type: 'origin', k: m.k, row }),
            (error: Error) => c.send({ type: 'origin', k: m.k, error: error.message }),
          )
        } else if (m.type === 'update') c.send({ type: 'updated', k: m.k, version: origin.update(m.key) })
        else if (m.type === 'tick')
          progress(
            `${req.label} · day ${num(m.at / 1000, 0)}/${num(plan.dayMs / 1000, 0)} s · ${num(m.reads)} reads${req.instances > 1 ? ' on instance 0' : ''} · ${num(origin.figures.calls)} origin calls`,
          )
      })
    }
    const done = children.map((c) => c.next('done', plan.dayMs + START_DELAY_MS + DAY_SLACK_MS))
    for (const c of children) c.send({ type: 'go', t0 })
    const reports = (await Promise.all(done)).map((m) => m.report)
    progress(`${req.label} · day over: ${num(origin.figures.calls)} origin calls, ${num(reports.reduce((s, r) => s + r.unsettled, 0))} reads unanswered`)
    const redisCommands = new Map<string, number>()
    let redisCpuMs = Number.NaN
    if (req.redis !== undefined) {
      const after = await commandCalls(req.redis.admin)
      redisCpuMs = (await serverCpuMs(req.redis.admin)) - cpuBefore
      for (const [command, calls] of after) {
        // The two INFO calls of the measurement itself.
        const delta = calls - (before.get(command) ?? 0) - (command === 'info' ? 2 : 0)
        if (delta > 0) redisCommands.set(command, delta)
      }
    }
    return { reports, origin: origin.figures, redisCommands, redisCpuMs, ends, loadAverage: loadavg()[0]! }
  } finally {
    ends.push(...(await Promise.all(children.map((c) => c.stop()))))
  }
}
