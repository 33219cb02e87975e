/**
 * `echostore/limits`: the bounds a table checks its input against and the constants its policies
 * run on, for code that must stay within them (validating before a call, sizing a deployment).
 * @module echostore/limits
 */
export { MAX_TTL, MAX_CAPACITY, MAX_BATCH_SIZE } from './table/options.js'
export { MAX_ID_LENGTH } from './core/id.js'
export { MAX_VERSION } from './core/versions.js'
export { PUBLISH_TIMEOUT } from './bus/publish.js'
export { DEFAULT_L2_TIMEOUT } from './l2/store.js'
export { BREAKER_FAILURES, BREAKER_COOLDOWN } from './l2/facade.js'
