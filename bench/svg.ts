import { escapeXml } from './lib/xml.js'
import type { CohortRun, W6Result } from './workloads/w6-cohort.js'
import { refills } from './workloads/w6-cohort.js'

const BIN = 5
/** Series colours, shared by the bench's pictures (W6 uses the first three, W12 all of them). */
export const COLORS = ['#1b7837', '#c51b7d', '#2166ac', '#e08214', '#762a83', '#8c510a', '#01665e', '#999999']
const W = 760
const H = 380
const M = { left: 60, right: 20, top: 56, bottom: 96 }

/** Up to three series: EchoStore with and without jitter, then peers with a ms ttl, then floors. */
export function chooseSeries(result: W6Result): string[] {
  const msTtl = result.series.filter((s) => (s.contender.ttlResolutionMs ?? 1) <= 1)
  const order = ['subject', 'peer', 'floor'] as const
  return order.flatMap((kind) => msTtl.filter((s) => s.contender.kind === kind).map((s) => s.name)).slice(0, 3)
}

function histogram(run: CohortRun, bins: number): number[] {
  const counts = new Array<number>(bins).fill(0)
  for (const t of refills(run)) {
    const b = Math.floor(t / BIN)
    if (b < bins) counts[b]!++
  }
  return counts
}

/** A round axis step (1, 2 or 5 × a power of ten) giving about five ticks up to `max`. */
export function niceStep(max: number): number {
  const raw = max / 5
  const mag = 10 ** Math.floor(Math.log10(raw))
  return [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw
}

/**
 * The W6 picture as a hand-written SVG: refills (loader calls after the fill) per 5 ms over time,
 * one step line per series, on one linear scale, so a jittered cohort's plateau stands next to an
 * unjittered cohort's spike.
 */
export function cohortSvg(result: W6Result): string {
  const names = chooseSeries(result)
  const runs = names.map((n) => result.picked.get(n)!)
  const spanMs = Math.ceil(Math.max(...runs.map((r) => r.observeMs)) / BIN) * BIN
  const bins = spanMs / BIN
  const hists = runs.map((r) => histogram(r, bins))
  const yMax = Math.max(1, ...hists.flat())
  const yStep = niceStep(yMax)
  const yTop = Math.ceil(yMax / yStep) * yStep
  const pw = W - M.left - M.right
  const ph = H - M.top - M.bottom
  const x = (ms: number) => M.left + (ms / spanMs) * pw
  const y = (v: number) => M.top + ph - (v / yTop) * ph
  const out: string[] = []
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" font-family="system-ui, sans-serif" font-size="12">`)
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`)
  out.push(`<text x="${M.left}" y="22" font-size="15" font-weight="600">W6: loader calls over time for a 400-row cohort (ttl 200 ms)</text>`)
  out.push(`<text x="${M.left}" y="40" fill="#555">Refills per ${BIN} ms after the cohort was filled at t = 0, while every id is read every ~1 ms.</text>`)
  for (let v = 0; v <= yTop; v += yStep) {
    out.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${y(v)}" y2="${y(v)}" stroke="#e5e5e5"/>`)
    out.push(`<text x="${M.left - 6}" y="${y(v) + 4}" text-anchor="end" fill="#555">${v}</text>`)
  }
  const xStep = spanMs > 600 ? 200 : 50
  for (let ms = 0; ms <= spanMs; ms += xStep) {
    out.push(`<line x1="${x(ms)}" x2="${x(ms)}" y1="${M.top + ph}" y2="${M.top + ph + 5}" stroke="#555"/>`)
    out.push(`<text x="${x(ms)}" y="${M.top + ph + 18}" text-anchor="middle" fill="#555">${ms}</text>`)
  }
  out.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${M.top + ph}" y2="${M.top + ph}" stroke="#555"/>`)
  out.push(`<line x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${M.top + ph}" stroke="#555"/>`)
  out.push(`<text x="${M.left + pw / 2}" y="${M.top + ph + 36}" text-anchor="middle" fill="#333">ms after the fill</text>`)
  out.push(`<text transform="translate(16 ${M.top + ph / 2}) rotate(-90)" text-anchor="middle" fill="#333">loader calls per ${BIN} ms</text>`)
  hists.forEach((counts, i) => {
    const points: string[] = [`${x(0)},${y(0)}`]
    counts.forEach((c, b) => points.push(`${x(b * BIN)},${y(c)}`, `${x((b + 1) * BIN)},${y(c)}`))
    points.push(`${x(bins * BIN)},${y(0)}`)
    out.push(`<polyline fill="none" stroke="${COLORS[i % COLORS.length]}" stroke-width="2" stroke-linejoin="round" points="${points.join(' ')}"/>`)
  })
  names.forEach((name, i) => {
    const m = result.metrics.get(name)!
    const ly = M.top + ph + 56 + i * 16
    out.push(`<rect x="${M.left}" y="${ly - 9}" width="14" height="4" fill="${COLORS[i % COLORS.length]}"/>`)
    out.push(`<text x="${M.left + 20}" y="${ly - 3}">${escapeXml(name)}: peak ${m.peak} refills in 10 ms, first refills spread over ${Math.round(m.spread ?? 0)} ms</text>`)
  })
  out.push('</svg>')
  return `${out.join('\n')}\n`
}
