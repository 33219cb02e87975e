import type { Id } from './id.js'

/** Base of every error EchoStore raises on its own behalf; `code` is stable across releases. */
export abstract class EchoStoreError extends Error {
  /** A stable machine-readable code. */
  abstract readonly code: string
  constructor(
    /** The table that raised it. */
    readonly table: string,
    /** The id the fetch asked for. */
    readonly id: Id,
    message: string,
  ) {
    super(message)
    this.name = new.target.name
  }
}

/** A fetch, put or invalidate on a table that has been closed. Create a new table, or call it before `close()`. */
export class TableClosedError extends EchoStoreError {
  readonly code = 'ECHOSTORE_TABLE_CLOSED'
  constructor(table: string, id: Id, op: 'fetch' | 'put' | 'invalidate' = 'fetch') {
    super(table, id, `echostore: table "${table}" is closed; ${op}(${JSON.stringify(id)}) was refused`)
  }
}

/** This waiter's own `timeout` passed; the flight goes on for the others and still fills the table. */
export class FetchTimeoutError extends EchoStoreError {
  readonly code = 'ECHOSTORE_FETCH_TIMEOUT'
  constructor(table: string, id: Id, readonly timeout: number) {
    super(table, id, `echostore: fetch(${JSON.stringify(id)}) on table "${table}" gave up after its timeout of ${timeout} ms`)
  }
}

/** The flight took longer than the table's `loadTimeout`; every waiter still waiting gets this. */
export class LoadTimeoutError extends EchoStoreError {
  readonly code = 'ECHOSTORE_LOAD_TIMEOUT'
  constructor(table: string, id: Id, readonly loadTimeout: number) {
    super(
      table,
      id,
      `echostore: loading ${JSON.stringify(id)} for table "${table}" took longer than loadTimeout (${loadTimeout} ms); ` +
        'the loader was aborted through its signal. Raise loadTimeout or make the loader faster.',
    )
  }
}
