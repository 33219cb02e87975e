/**
 * The Grafana dashboard (grafana/echostore-dashboard.json) reads only metrics the Prometheus
 * exporter produces: every name in every expression (panels and template variables) is one that
 * `registerTableMetrics` registers, every metric is filtered by the `$table` variable, and the panels
 * cover what the dashboard is for.
 */
import { readFileSync } from 'node:fs'
import * as promClient from 'prom-client'
import { describe, expect, it } from 'vitest'
import { createTable } from '../src/index.js'
import { registerTableMetrics } from '../src/prometheus.js'

interface Target {
  expr: string
}
interface Panel {
  title: string
  targets?: Target[]
  panels?: Panel[]
}
const dashboard = JSON.parse(readFileSync(new URL('../grafana/echostore-dashboard.json', import.meta.url), 'utf8')) as {
  uid: string
  panels: Panel[]
  templating: { list: { name: string; definition?: string; query?: string | { query: string } }[] }
}

/** Every panel, rows' panels included. */
const panels = (list: Panel[]): Panel[] => list.flatMap((panel) => [panel, ...panels(panel.panels ?? [])])
/** Every PromQL expression of the dashboard: its panels' targets and its query variables. */
const expressions: string[] = [
  ...panels(dashboard.panels).flatMap((panel) => (panel.targets ?? []).map((target) => target.expr)),
  ...dashboard.templating.list.flatMap((variable) => [variable.definition, typeof variable.query === 'object' ? variable.query.query : undefined]).filter((q): q is string => q !== undefined),
]
/** The metric names an expression uses (everything named `echostore_…`). */
const metricsIn = (expr: string): string[] => expr.match(/\bechostore_[a-z0-9_]+\b/g) ?? []

/** The names the exporter registers for a table, as a registry lists them. */
async function exported(): Promise<Set<string>> {
  const registry = new promClient.Registry()
  const table = createTable<string>({ name: 'users' })
  const unregister = registerTableMetrics(promClient, table, { registry })
  const names = new Set((await registry.getMetricsAsJSON()).map((metric) => metric.name))
  unregister()
  await table.close()
  return names
}

describe('the Grafana dashboard', () => {
  it('names in every expression only metrics the Prometheus exporter produces', async () => {
    const produced = await exported()
    expect(expressions.length).toBeGreaterThan(20)
    for (const expr of expressions) {
      const used = metricsIn(expr)
      expect(used.length, expr).toBeGreaterThan(0)
      for (const name of used) expect(produced, `${name} in ${expr}`).toContain(name)
    }
  })

  it('filters every metric of its panels by the $table variable, and every expression is balanced', () => {
    for (const panel of panels(dashboard.panels)) {
      for (const { expr } of panel.targets ?? []) {
        const selectors = expr.match(/\bechostore_[a-z0-9_]+(\{[^}]*\})?/g) ?? []
        for (const selector of selectors) expect(selector, `${panel.title}: ${expr}`).toMatch(/\{table=~"\$table"\}$/)
        expect(expr.split('(').length, expr).toBe(expr.split(')').length)
      }
    }
  })

  it('covers hit rate, origin calls and calls saved by coalescing, stale answers, L2 errors and breaker, leases and bus gaps', () => {
    const used = new Set(expressions.flatMap(metricsIn))
    const wanted = [['hits', 'misses'], ['loads', 'coalesced'], ['stale_hits'], ['l2_errors', 'l2_timeouts', 'l2_skipped'], ['lease_acquired', 'lease_waited', 'lease_lost'], ['coh_gaps']].flat()
    for (const counter of wanted) expect(used, counter).toContain(`echostore_${counter}_total`)
    expect(new Set(panels(dashboard.panels).map((panel) => panel.title))).toEqual(
      new Set([
        'Hit rate',
        'Hit rate since start',
        'Origin calls and calls saved',
        'Misses per origin call',
        'Stale answers',
        'L2 errors and breaker',
        'Leases',
        'Bus gaps and coherence',
        'Rows and flights',
        'Evictions',
      ]),
    )
  })
})
