// Preloaded (`node --require`) by spec/node-redis-url.spec.ts: a process where ioredis is not installed, as Node says it.
const Module = require('node:module')
const resolve = Module._resolveFilename
Module._resolveFilename = function (request, ...rest) {
  if (request === 'ioredis') throw Object.assign(new Error(`Cannot find module 'ioredis'`), { code: 'MODULE_NOT_FOUND' })
  return resolve.call(this, request, ...rest)
}
