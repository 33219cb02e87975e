/**
 * `@opentelemetry/api`, loaded once, when `echostore/otel` is imported: only that entry imports this
 * module, so no other entry loads it. This is the ES module build's file; the CommonJS build uses
 * `api-cjs.cts` in its place.
 */
import { createRequire } from 'node:module'
import { requireOtelApi } from './require-api.js'

/** The `@opentelemetry/api` module, resolved from where EchoStore is installed. */
// biome-ignore lint/suspicious/noTsIgnore: @ts-expect-error would fail the ESM build, where there is no error
// @ts-ignore: tshy type-checks this file in the CommonJS build too (where import.meta does not exist) before replacing it with api-cjs.cts
export const otel = requireOtelApi(createRequire(import.meta.url))
