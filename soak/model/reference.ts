/**
 * The reference the scheduled model run is judged against: an origin whose every id has a revision
 * (each change bumps it; a clear bumps every id), values that say which revision they hold and who
 * made them, and, per table and id, the revision below which no answer may fall: raised when a
 * change is known to that table (its own change resolved, or another table's change delivered by
 * the bus). Changes carry their revision as their version, so version order is revision order.
 */
import { IDS, type ModelId } from './scenario.js'

/** What the tables hold: a value of one id at one revision, made by a loader call or a put. */
export interface ModelValue {
  id: ModelId
  rev: number
  /** Its loader call's index in {@link Reference.calls}, or -1 for a put's value. */
  call: number
}

/** One loader call: which table made it, when it started and when it answered, in the run's steps. */
export interface LoaderCall {
  table: number
  started: number
  answered: number | undefined
}

/** A floor: from `step` on, answers of `id` (every id when undefined) on `table` hold `rev` or later, when `holds(value)` at judging time. */
interface Raise {
  table: number
  id: ModelId | undefined
  rev: number
  step: number
  holds: (value: ModelValue) => boolean
}

/** The origin, the loader calls, and the floors of every table. */
export class Reference {
  /** The run's clock of events: every operation and every release moves it. */
  step = 0
  readonly calls: LoaderCall[] = []
  readonly #revs = new Map<ModelId, number>(IDS.map((id) => [id, 0]))
  readonly #raises: Raise[] = []

  /** The origin's revision of `id` now. */
  rev(id: ModelId): number {
    return this.#revs.get(id)!
  }

  /** A change of `id` at the origin: its new revision. */
  bump(id: ModelId): number {
    const rev = this.rev(id) + 1
    this.#revs.set(id, rev)
    return rev
  }

  /** A clear at the origin: every id changes; returns the revisions after it. */
  bumpAll(): Map<ModelId, number> {
    for (const id of IDS) this.bump(id)
    return new Map(this.#revs)
  }

  /** A loader call starting now: the value it reads. */
  load(id: ModelId, table: number): { value: ModelValue; call: LoaderCall } {
    const call: LoaderCall = { table, started: ++this.step, answered: undefined }
    return { value: { id, rev: this.rev(id), call: this.calls.push(call) - 1 }, call }
  }

  /** From now on, `table`'s answers of `id` (every id: undefined) must hold `rev` or later, for the answers `holds(value)` is true of at judging time. */
  raise(table: number, id: ModelId | undefined, rev: number, holds: (value: ModelValue) => boolean = () => true): void {
    this.#raises.push({ table, id, rev, step: ++this.step, holds })
  }

  /** The revision `value`, `table`'s answer of `id` to a fetch that started at `step`, must reach. */
  floor(table: number, id: ModelId, step: number, value: ModelValue): number {
    let floor = 0
    for (const r of this.#raises) if (r.table === table && r.step < step && (r.id === undefined || r.id === id) && r.rev > floor && r.holds(value)) floor = r.rev
    return floor
  }
}
