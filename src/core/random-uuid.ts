/**
 * Random UUIDs (a table's origin on the bus, a lease's token), from the Web Crypto object Node puts
 * on `globalThis`. It is loaded the first time one is asked for, where importing `node:crypto` as
 * an ES module would load it (and build its many named exports) at every import of the root entry.
 */

/** A random RFC 4122 version 4 UUID. */
export function randomUUID(): string {
  return globalThis.crypto.randomUUID()
}
