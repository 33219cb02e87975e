import { COLORS, niceStep } from './svg.js'
import { escapeXml } from './lib/xml.js'
import { BIN_MS } from './workloads/w12-origin.js'
import type { DayPlan } from './workloads/w12-trace.js'

/** One line of the W12 picture: a contender's origin calls per BIN_MS over the day. */
export interface DaySeries {
  name: string
  perBin: readonly number[]
  total: number
}

/** One panel: a shape of the day and its series. */
export interface DayPanel {
  title: string
  series: DaySeries[]
}

const W = 1000
const PANEL_H = 300
const M = { left: 60, right: 290, top: 64, bottom: 40 }

/**
 * The W12 picture as a hand-written SVG: origin calls per 100 ms across the day, one step line per
 * contender, one panel per shape, with the outage shaded and the campaign bursts marked.
 */
export function daySvg(plan: DayPlan, panels: readonly DayPanel[]): string {
  const bins = Math.ceil(plan.dayMs / BIN_MS)
  const pw = W - M.left - M.right
  const ph = PANEL_H - M.bottom - 30
  const H = M.top + panels.length * PANEL_H
  const x = (ms: number) => M.left + (ms / plan.dayMs) * pw
  const out: string[] = []
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" font-family="system-ui, sans-serif" font-size="12">`)
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`)
  out.push(`<text x="${M.left}" y="22" font-size="15" font-weight="600">W12: origin calls per ${BIN_MS} ms across a service's day (ttl ${plan.ttl} ms)</text>`)
  out.push(
    `<text x="${M.left}" y="40" fill="#555">Shaded: the origin is down. Dashed: a campaign burst (${plan.readersPerBurstKey} readers on each of 3 cold keys at once). t = 0: the hottest ${plan.hotRows} rows are read together.</text>`,
  )
  panels.forEach((panel, p) => {
    const top = M.top + p * PANEL_H + 20
    const hists = panel.series.map((s) => s.perBin.slice(0, bins))
    // The floor's herds would flatten every other line: the scale fits the others, the floor is clipped at its top.
    const scaled = hists.filter((_, i) => !panel.series[i]!.name.startsWith('floor:'))
    const yMax = Math.max(1, ...(scaled.length > 0 ? scaled : hists).flat())
    const yStep = niceStep(yMax)
    const yTop = Math.ceil(yMax / yStep) * yStep
    const y = (v: number) => top + ph - (Math.min(v, yTop) / yTop) * ph
    out.push(`<text x="${M.left}" y="${top - 8}" font-size="13" font-weight="600">${escapeXml(panel.title)}</text>`)
    out.push(`<text x="${M.left + pw + 14}" y="${top - 8}" fill="#555">origin calls over the day</text>`)
    out.push(`<rect x="${x(plan.outage.from)}" y="${top}" width="${x(plan.outage.to) - x(plan.outage.from)}" height="${ph}" fill="#fbe3e3"/>`)
    for (const b of plan.bursts) out.push(`<line x1="${x(b.at)}" x2="${x(b.at)}" y1="${top}" y2="${top + ph}" stroke="#888" stroke-dasharray="4 3"/>`)
    for (let v = 0; v <= yTop; v += yStep) {
      out.push(`<line x1="${M.left}" x2="${M.left + pw}" y1="${y(v)}" y2="${y(v)}" stroke="#e5e5e5"/>`)
      out.push(`<text x="${M.left - 6}" y="${y(v) + 4}" text-anchor="end" fill="#555">${v}</text>`)
    }
    for (let ms = 0; ms <= plan.dayMs; ms += 1_000) {
      out.push(`<line x1="${x(ms)}" x2="${x(ms)}" y1="${top + ph}" y2="${top + ph + 5}" stroke="#555"/>`)
      out.push(`<text x="${x(ms)}" y="${top + ph + 18}" text-anchor="middle" fill="#555">${ms / 1000} s</text>`)
    }
    out.push(`<line x1="${M.left}" x2="${M.left + pw}" y1="${top + ph}" y2="${top + ph}" stroke="#555"/>`)
    out.push(`<line x1="${M.left}" x2="${M.left}" y1="${top}" y2="${top + ph}" stroke="#555"/>`)
    out.push(`<text transform="translate(16 ${top + ph / 2}) rotate(-90)" text-anchor="middle" fill="#333">calls / ${BIN_MS} ms</text>`)
    hists.forEach((counts, i) => {
      const points: string[] = [`${x(0)},${y(0)}`]
      counts.forEach((c, b) => points.push(`${x(b * BIN_MS)},${y(c)}`, `${x(Math.min(plan.dayMs, (b + 1) * BIN_MS))},${y(c)}`))
      out.push(`<polyline fill="none" stroke="${COLORS[i % COLORS.length]}" stroke-width="1.5" stroke-linejoin="round" points="${points.join(' ')}"/>`)
    })
    panel.series.forEach((s, i) => {
      const ly = top + 10 + i * 18
      out.push(`<rect x="${M.left + pw + 14}" y="${ly - 6}" width="14" height="4" fill="${COLORS[i % COLORS.length]}"/>`)
      const peak = Math.max(0, ...hists[i]!)
      const clipped = peak > yTop ? ` (clipped; peak ${peak.toLocaleString('en-US')})` : ''
      out.push(`<text x="${M.left + pw + 34}" y="${ly}">${escapeXml(s.name)}: ${s.total.toLocaleString('en-US')}${clipped}</text>`)
    })
  })
  out.push('</svg>')
  return `${out.join('\n')}\n`
}
