import { EXPECTED_WARNING } from './hostile-inputs.js'

/**
 * What escaped the library while the soak ran: unhandled promise rejections and process warnings
 * (a throwing event listener, a listener leak). Either is a failure of the run.
 */
export class Escapes {
  /** Reasons of the rejections nobody handled. */
  readonly rejections: unknown[] = []
  /** Warnings the process emitted. */
  readonly warnings: Error[] = []
  readonly #onRejection = (reason: unknown) => void this.rejections.push(reason)
  // The one warning the bad-input catalog provokes on purpose (a throwing inspect observer) is not an escape.
  readonly #onWarning = (warning: Error) => void (warning.message.includes(EXPECTED_WARNING) || this.warnings.push(warning))

  constructor() {
    process.on('unhandledRejection', this.#onRejection)
    process.on('warning', this.#onWarning)
  }

  /** Stops listening. */
  stop(): void {
    process.off('unhandledRejection', this.#onRejection)
    process.off('warning', this.#onWarning)
  }
}
