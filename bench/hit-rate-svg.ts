import { num } from './lib/format.js'
import { escapeXml } from './lib/xml.js'
import { HIT_RATE_PEERS, type W9Result } from './workloads/w9-hit-rate.js'

const COLORS = ['#1b7837', '#2166ac', '#e08214', '#c51b7d', '#762a83', '#8c510a']
const W = 800
const H = 420
const M = { left: 60, right: 20, top: 84, bottom: 64 }

/**
 * The W9 picture as a hand-written SVG: hit rate per trace, one group of bars per trace and one
 * bar per contender, each labelled with its hit rate, on a scale from 0 % to the 20 % step above
 * the highest bar, with a legend naming each peer's eviction policy, so it reads without the tables.
 */
export function hitRateSvg(result: W9Result): string {
  const { traces, shape } = result
  const contenders = traces[0]?.hitRates.map((h) => h.contender) ?? []
  const pw = W - M.left - M.right
  const ph = H - M.top - M.bottom
  const groupW = pw / Math.max(1, traces.length)
  const barW = (groupW * 0.8) / Math.max(1, contenders.length)
  const highest = Math.max(0, ...traces.flatMap((t) => t.hitRates.map((h) => h.hitRate)))
  const topPct = Math.min(100, Math.ceil((highest * 100 + 5) / 20) * 20)
  const y = (share: number) => M.top + ph - ((share * 100) / topPct) * ph
  const out: string[] = []
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" font-family="system-ui, sans-serif" font-size="12">`)
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`)
  out.push(`<text x="${M.left}" y="22" font-size="15" font-weight="600">W9: hit rate per trace, capacity ${num(shape.capacity)} (1 % of the ids); higher is better</text>`)
  out.push(`<text x="${M.left}" y="40" fill="#555">${num(shape.requests)} requests over ${num(shape.keySpace)} ids per trace, one at a time; each bar is labelled with its hit rate in %.</text>`)
  contenders.forEach((name, i) => {
    const lx = M.left + i * (pw / Math.max(1, contenders.length))
    const policy = HIT_RATE_PEERS[name]
    out.push(`<rect x="${lx}" y="52" width="12" height="12" fill="${COLORS[i % COLORS.length]}"/>`)
    out.push(`<text x="${lx + 18}" y="62">${escapeXml(policy !== undefined ? `${name} (${policy})` : name)}</text>`)
  })
  for (let pct = 0; pct <= topPct; pct += 20) {
    out.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${y(pct / 100)}" y2="${y(pct / 100)}" stroke="#e5e5e5"/>`)
    out.push(`<text x="${M.left - 6}" y="${y(pct / 100) + 4}" text-anchor="end" fill="#555">${pct} %</text>`)
  }
  traces.forEach((trace, g) => {
    const gx = M.left + g * groupW + groupW * 0.1
    trace.hitRates.forEach(({ hitRate }, i) => {
      const x = gx + i * barW
      out.push(`<rect x="${x + 1}" y="${y(hitRate)}" width="${barW - 2}" height="${y(0) - y(hitRate)}" fill="${COLORS[i % COLORS.length]}"/>`)
      out.push(`<text x="${x + barW / 2}" y="${y(hitRate) - 4}" text-anchor="middle" font-size="11">${num(hitRate * 100, 1)}</text>`)
    })
    const cx = M.left + g * groupW + groupW / 2
    out.push(`<text x="${cx}" y="${M.top + ph + 20}" text-anchor="middle" font-weight="600">${escapeXml(trace.name)}</text>`)
    out.push(`<text x="${cx}" y="${M.top + ph + 36}" text-anchor="middle" fill="#555">${escapeXml(trace.title)}</text>`)
  })
  out.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${y(0)}" y2="${y(0)}" stroke="#555"/>`)
  out.push(`<line x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${y(0)}" stroke="#555"/>`)
  out.push(`<text transform="translate(16 ${M.top + ph / 2}) rotate(-90)" text-anchor="middle" fill="#333">hit rate (1 − loads / requests)</text>`)
  out.push('</svg>')
  return `${out.join('\n')}\n`
}
