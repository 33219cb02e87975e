/**
 * A small terminal readout for the examples: a line of counters that redraws in place on a
 * terminal, and prints plain lines when stdout is not one (CI, a pipe).
 */
import type { Stats } from 'echostore'

/** True when stdout is a terminal that can redraw a line. */
export const live = process.stdout.isTTY === true && process.env.CI !== 'true'

/** One line of the counters a reader of the cache cares about. */
export function counterLine(stats: Stats, extra = ''): string {
  const saved = stats.hits + stats.misses - stats.loads
  return (
    `hits ${pad(stats.hits)}  misses ${pad(stats.misses)}  hit rate ${(stats.hit_rate * 100).toFixed(1).padStart(5)}%  ` +
    `coalesced ${pad(stats.coalesced)}  loads ${pad(stats.loads)}  saved ${pad(saved)}  fills ${pad(stats.fills)}  ` +
    `size ${pad(stats.size)}  swept ${pad(stats.swept)}${extra ? `  ${extra}` : ''}`
  )
}

function pad(n: number): string {
  return String(n).padStart(6)
}

/** A progress line: redrawn in place on a terminal; off a terminal only `done` lines are printed. */
export function progress(): { show(line: string): void; done(line: string): void } {
  return {
    show(line) {
      if (live) process.stdout.write(`\r\x1b[2K${line}`)
    },
    done(line) {
      if (live) process.stdout.write('\r\x1b[2K')
      console.log(line)
    },
  }
}

/** Bars of `counts` scaled to `height` rows, one column per entry: a chart that fits a terminal. */
export function barChart(counts: number[], height = 6): string[] {
  const max = Math.max(1, ...counts)
  const blocks = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█']
  const lines: string[] = []
  for (let row = height - 1; row >= 0; row--) {
    let line = ''
    for (const count of counts) {
      const level = (count / max) * height - row
      line += level >= 1 ? '█' : level <= 0 ? ' ' : blocks[Math.round(level * 8)]
    }
    lines.push(line)
  }
  return lines
}
