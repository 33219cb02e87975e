import { badArgument, describe, reasonOf } from '../core/errors.js'

/**
 * Reads an untrusted options object once, into a plain record of the `known` keys it holds. An
 * option set to `undefined` is as good as absent (it takes its default). Refuses, with a TypeError
 * naming `call`: a value that is not an object, an unknown key (almost always a typo), an option
 * set to `null` (no option means anything by it: omit it), and an object that cannot be read (a getter or a Proxy trap that throws: the thrown error
 * becomes the refusal's `cause`). Everything read afterwards comes from the copy, so a getter runs
 * once and cannot answer differently the second time.
 */
export function readOptions<K extends string>(options: unknown, known: readonly K[], call: string): Partial<Record<K, unknown>> {
  if (options === null || typeof options !== 'object') throw badArgument(TypeError, `${call} takes an options object, got ${describe(options)}`)
  const allowed: ReadonlySet<string> = new Set(known)
  const copy: Partial<Record<K, unknown>> = {}
  let key = '(its keys)' // what is being read, for the refusal
  try {
    for (const own of Object.keys(options)) {
      key = own
      if (!allowed.has(own)) throw badArgument(TypeError, `${call}: unknown option "${own}" (known: ${known.join(', ')})`)
    }
    for (const name of known) {
      key = name
      const value: unknown = (options as Record<string, unknown>)[name]
      if (value === null) throw badArgument(TypeError, `${call}: option "${name}" is null: omit it (or pass undefined) for its default`)
      if (value !== undefined) copy[name] = value
    }
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === 'ECHOSTORE_BAD_ARGUMENT') throw error
    const what = key === '(its keys)' ? 'its keys' : `option "${key}"`
    throw badArgument(TypeError, `${call}: ${what} could not be read (${reasonOf(error)})`, { cause: error })
  }
  return copy
}
