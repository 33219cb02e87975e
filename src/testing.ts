/**
 * `echostore/testing`: aids for testing code that uses EchoStore. `chaosL2` wraps any L2 store to
 * fail on demand; `manualClock` and `memoryL2` (the latter also in the core entry) make time and L2 fakes.
 * @module echostore/testing
 */
export { chaosL2, type ChaosL2, type ChaosFault, type ChaosOp } from './l2/chaos.js'
export { ChaosError } from './core/errors.js'
export { manualClock, type ManualClock } from './core/clock.js'
export { memoryL2, type MemoryL2, type MemoryL2Options } from './l2/memory.js'
