/**
 * ioredis, loaded once, when `echostore/redis` is imported: only the Redis adapters import this
 * module, so the core entry never loads ioredis and works where it is not installed.
 */
import { createRequire } from 'node:module'
import { requireIoredis } from './require-ioredis.js'

/** The ioredis module, resolved from where EchoStore is installed. */
export const ioredis = requireIoredis(createRequire(import.meta.url))
