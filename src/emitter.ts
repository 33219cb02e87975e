/**
 * Creating mitt emitters in a way every build of EchoStore compiles and runs. mitt's types describe
 * a CommonJS module whose `default` is the factory; under `moduleResolution: NodeNext` an ES module
 * reads that default import as the whole module, which is not callable, while Node's `import` loads
 * mitt's ES build, whose default export is the factory itself. This module takes whichever the
 * running build holds, so no other module calls the default import.
 */
import mitt, { type Emitter, type EventType } from 'mitt'

/** mitt's factory, as its declarations type it. */
type MittFactory = <Events extends Record<EventType, unknown>>() => Emitter<Events>

const factory: MittFactory = typeof mitt === 'function' ? mitt : (mitt as { default: MittFactory }).default

/** A new, empty mitt emitter for `Events`. */
export function createEmitter<Events extends Record<EventType, unknown>>(): Emitter<Events> {
  return factory<Events>()
}
