/**
 * One cold miss runs through at most so many files of src/, makes at most so many calls into the
 * library and enters the owner at most so many times, for each way of reading (see
 * spec/support/cold-miss-path.ts for how it is measured). The bounds are the figures measured as
 * of this writing: a change that makes the path longer fails here, listing the files it ran.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { COLD_MISS_CASES, type ColdMissCase, type ColdMissPath, listFiles, measureColdMissPaths } from './support/cold-miss-path.js'

/** Files of src/ a cold `fetch` runs, on a table without L2. */
const MAX_FILES_FETCH = 15
/** Files of src/ a cold `fetch` runs, on a table with `memoryL2()`. */
const MAX_FILES_FETCH_L2 = 21
/** Files of src/ a cold `getMany` of one id runs, on a table with a `batchLoader`. */
const MAX_FILES_GET_MANY = 20

/** Calls into src/ of a cold `fetch`, without L2. */
const MAX_CALLS_FETCH = 110
/** Calls into src/ of a cold `fetch`, with `memoryL2()` (two of them: the check of each store answer, which takes a throwing answer as a failure; two more: the entry key's generation suffix, one rule for both stores, `inGeneration`). */
const MAX_CALLS_FETCH_L2 = 205
/** Calls into src/ of a cold `getMany` of one id, with a `batchLoader` (one of them: the guard that fails an id alone when its reported version is refused). */
const MAX_CALLS_GET_MANY = 140

/** Times one cold miss enters the owner (its actor's transition), whatever the read. */
const MAX_OWNER_ENTRIES = 2

const BOUNDS: Record<ColdMissCase, { files: number; calls: number; ownerEntries: number }> = {
  fetch: { files: MAX_FILES_FETCH, calls: MAX_CALLS_FETCH, ownerEntries: MAX_OWNER_ENTRIES },
  'fetch, memoryL2': { files: MAX_FILES_FETCH_L2, calls: MAX_CALLS_FETCH_L2, ownerEntries: MAX_OWNER_ENTRIES },
  'getMany, batch loader': { files: MAX_FILES_GET_MANY, calls: MAX_CALLS_GET_MANY, ownerEntries: MAX_OWNER_ENTRIES },
}

describe('a cold miss', () => {
  const paths = new Map<ColdMissCase, ColdMissPath>()
  beforeAll(async () => {
    for (const path of await measureColdMissPaths()) paths.set(path.case, path)
  }, 120_000)

  describe.each(COLD_MISS_CASES)('of %s', (kind) => {
    const bound = BOUNDS[kind]
    const ran = () => {
      const path = paths.get(kind)!
      return `${kind}: ${path.files.length} files, ${path.calls} calls, ${path.ownerEntries} owner entries; the files it ran:\n${listFiles(path)}`
    }

    it(`runs at most ${bound.files} files of src/`, () => {
      expect(paths.get(kind)!.files.length, ran()).toBeLessThanOrEqual(bound.files)
    })

    it(`makes at most ${bound.calls} calls into src/`, () => {
      expect(paths.get(kind)!.calls, ran()).toBeLessThanOrEqual(bound.calls)
    })

    it(`enters the owner at most ${bound.ownerEntries} times`, () => {
      expect(paths.get(kind)!.ownerEntries, ran()).toBeLessThanOrEqual(bound.ownerEntries)
    })
  })
})
