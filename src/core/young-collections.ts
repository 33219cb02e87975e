/**
 * Why a long-lived `Map` or `Set` that changes all the time is made anew now and then (the flights
 * registry, a turn's plain misses, the write-backs in progress). V8 (Node 20) gives a collection that
 * grows, shrinks, is rehashed to drop its deleted entries, or is cleared a new backing table in the
 * generation of the old one, and the old table, now garbage, keeps its entries. Once a full GC has
 * moved such a collection's table to the old generation (it moves every live young object there),
 * each later table is allocated old too, and every table left behind keeps what it held alive
 * through every scavenge until the next full GC: the scavenges copy it and promote it. For the
 * flights registry and the mailbox that was nearly every flight, with its shared miss and its
 * result, and cold misses at concurrency 64 ran at about half speed for as long as it lasted. A
 * collection made anew starts young and dies young.
 */

/** Changes after which a long-lived collection that churns is made anew (see the module comment): bounds that state to this many after a full GC. */
export const RENEW_EVERY = 1_024
