/**
 * Bundled by esbuild for Node (`--bundle --platform=node --format=esm`) and run from a folder with no
 * node_modules: EchoStore and its dependencies live inside the one bundle file.
 */
import { createTable } from 'echostore'
import { assertHerdOfOne } from './herd.mjs'

const table = createTable({ name: 'esbuild' })
await assertHerdOfOne(table, 'esbuild')
await table.close()
