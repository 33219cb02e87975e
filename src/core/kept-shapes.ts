/**
 * Hidden classes kept for the life of the process. V8 gives objects built alike one hidden class
 * ("map"), but holds the maps an instance's fields lead to only weakly: once no object of a kind is
 * alive (every table closed; between two herds, no miss in flight) a full gc drops them, and the next
 * objects of the kind get new ones. Code optimized on the old maps is thrown away, and after a few
 * such generations it is recompiled slower: in a process that had made and closed a few tables, a
 * herd's waiters cost twice as much each, and cold misses a third more. So the kinds of object a
 * table, a fetch and a flight make each keep a sample here: its map, and the maps on the way to it,
 * then never change.
 */
const samples: object[] = []

/** Keeps `sample`, and so its hidden class, alive for the life of the process (see the module comment). */
export function keepShape(sample: object): void {
  samples.push(sample)
}
