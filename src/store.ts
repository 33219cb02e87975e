/**
 * `echostore/store`: for writing an L2 store or a bus of your own. The contracts a table calls
 * (`L2Store`, `Bus`), what travels through them, the wire format every bus speaks (with its parser
 * and size bound), and the codecs the Redis store encodes values with.
 * @module echostore/store
 */
export type { L2Store, L2Entry, L2Write, L2Kind, L2Leases, LeaseRead } from './l2/store.js'
export { jsonCodec, v8Codec, type Codec } from './l2/codec.js'
export type { Bus, BusDelivery, CoherenceMessage, ChangeMessage, ClearMessage, TagMessage, FillMessage, UnfilledMessage, InKeySpace } from './bus/bus.js'
export { parseCoherenceMessage, encodeWire, decodeWire, MAX_WIRE_BYTES, type ParseResult } from './bus/message.js'
