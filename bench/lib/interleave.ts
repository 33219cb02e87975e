import { collect } from './gc.js'
import { progress } from './progress.js'

/**
 * Runs `measure` for every contender (anything with a `name`), `reps` times, interleaved: each
 * repetition runs every contender once, and the order rotates by one each repetition, so no
 * contender always goes first (cold JIT) or last (a heap its predecessors dirtied). A full gc runs
 * before each measurement. Returns each contender's results in repetition order.
 */
export async function interleave<C extends { name: string }, T>(label: string, contenders: readonly C[], reps: number, measure: (contender: C, rep: number) => Promise<T>): Promise<Map<string, T[]>> {
  const results = new Map<string, T[]>(contenders.map((c) => [c.name, []]))
  for (let rep = 0; rep < reps; rep++) {
    for (let j = 0; j < contenders.length; j++) {
      const contender = contenders[(j + rep) % contenders.length]!
      progress(`${label} · rep ${rep + 1}/${reps} · ${contender.name}`)
      collect()
      results.get(contender.name)!.push(await measure(contender, rep))
    }
  }
  return results
}
