/**
 * Spans from the tracing channels: one span per fetch that was not answered by a row (the fetch
 * that started a flight carries the flight: its loads and L2 calls are its children, and
 * `echostore.waiters` counts the callers that waited on it; a fetch that joined a flight links to it),
 * one per loader call and one per L2 call, each a child of what was active where it began. Ids go
 * on spans only with `recordIds`.
 */
import { reasonOf } from '../core/errors.js'
import { AsyncLocalStorage } from 'node:async_hooks'
import type * as Api from '@opentelemetry/api'
import { type FetchChannelContext, type L2ChannelContext, type LoadChannelContext, fetchChannel, l2Channel, loadChannel } from '../core/channels.js'
import { type FetchTrace, flightHere, tracePublishing } from '../core/fetch-trace.js'
import { SEMCONV, ID, IDS, L2_OP, OUTCOME, TABLE, WAITERS, errorType, serverAttributes } from './attributes.js'
import { type Subscription, type TracingHandlers, subscribeTracing } from './subscription.js'

/** What was known when a traced fetch began: where it was called from, and when; its span once it has one. Written only by this module. */
interface FetchRecord {
  readonly context: FetchChannelContext
  readonly parent: Api.Context
  readonly startTime: number
  span: Api.Span | undefined
}

/** Now, in ms since the epoch with sub-millisecond precision (a span's time). */
function now(): number {
  return performance.timeOrigin + performance.now()
}

/** Subscribes span making to the tracing channels; the returned subscription undoes it. */
export function subscribeSpans(api: typeof Api, tracer: Api.Tracer, recordIds: boolean, onError: (error: unknown) => void): Subscription {
  const { SpanKind, SpanStatusCode, context: contexts, trace } = api
  /** The loader call running here: bound to `echostore:load`'s start, so a fetch made by a loader is its child. */
  const inLoad = new AsyncLocalStorage<LoadChannelContext>()
  /** Where this subscription keeps its record of a traced fetch, on the fetch's trace (a key of its own, so two subscriptions never meet). */
  const RECORD = Symbol('echostore/otel fetch record')
  const recordOf = (traced: FetchTrace | undefined): FetchRecord | undefined => (traced as Recorded | undefined)?.[RECORD]
  type Recorded = FetchTrace & { [RECORD]?: FetchRecord }
  const open = new WeakMap<object, Api.Span>() // load and L2 spans until they end

  const ids = (context: { id?: unknown; ids?: readonly unknown[] }): Api.Attributes => {
    if (!recordIds) return {}
    if (context.ids !== undefined) return { [IDS]: Array.isArray(context.ids) ? context.ids.map(String) : String(context.ids) }
    return context.id === undefined ? {} : { [ID]: context.id as string | number }
  }
  /** What a span that begins here is a child of: the running loader's span, or the active context. */
  const here = (): Api.Context => {
    const load = inLoad.getStore()
    const span = load === undefined ? undefined : open.get(load)
    return span === undefined ? contexts.active() : trace.setSpan(contexts.active(), span)
  }
  /** The span of a traced fetch, made when first needed (a child of its flight's work, or its end). */
  const spanOf = (record: FetchRecord, links?: Api.Link[]): Api.Span => {
    record.span ??= tracer.startSpan(
      'echostore.fetch',
      { kind: SpanKind.INTERNAL, startTime: record.startTime, attributes: { [TABLE]: record.context.table, ...ids(record.context) }, ...(links === undefined ? {} : { links }) },
      record.parent,
    )
    return record.span
  }
  /** The parent of a load or L2 span beginning here: the span of the fetch that started the flight running here (a batch read's, for one of its ids), else what {@link here} says. */
  const parentHere = (): Api.Context => {
    const starter = flightHere.getStore()?.starter
    const record = starter === undefined ? undefined : recordOf(starter.whole ?? starter)
    return record === undefined ? here() : trace.setSpan(contexts.active(), spanOf(record))
  }
  const fail = (span: Api.Span, error: unknown): void => {
    span.setAttribute(SEMCONV.errorType, errorType(error))
    if (error instanceof Error) span.recordException(error)
    span.setStatus({ code: SpanStatusCode.ERROR, message: reasonOf(error) })
  }

  /** Ends the load or L2 span begun for `context`, with an error status when it failed. */
  const endOpen = (context: object): void => {
    const span = open.get(context)
    if (span === undefined) return
    open.delete(context)
    if ('error' in context) fail(span, context.error)
    span.end()
  }

  const fetchHandlers: TracingHandlers<FetchChannelContext> = {
    start(context) {
      const traced = tracePublishing() as Recorded | undefined
      if (traced !== undefined) traced[RECORD] = { context, parent: here(), startTime: now(), span: undefined }
    },
    asyncEnd(context) {
      const traced = tracePublishing()
      const record = recordOf(traced)
      if (record === undefined || traced === undefined || context.outcome === 'hit' || context.outcome === 'negative') return
      const flight = traced.flight
      const starter = flight === undefined ? undefined : recordOf(flight.starter.whole ?? flight.starter)
      const joined = starter !== undefined && starter !== record
      const span = spanOf(record, joined ? [{ context: spanOf(starter).spanContext() }] : undefined)
      span.setAttribute(OUTCOME, context.outcome ?? 'error')
      if (flight !== undefined && !joined) span.setAttribute(WAITERS, flight.callers)
      if (context.outcome === 'error') fail(span, context.error)
      span.end(now())
    },
  }
  const loadHandlers: TracingHandlers<LoadChannelContext> = {
    start(context) {
      open.set(context, tracer.startSpan('echostore.load', { kind: SpanKind.INTERNAL, attributes: { [TABLE]: context.table, ...ids(context) } }, parentHere()))
    },
    asyncEnd: endOpen,
  }
  const l2Handlers: TracingHandlers<L2ChannelContext> = {
    start(context) {
      const attributes: Api.Attributes = { [TABLE]: context.table, [L2_OP]: context.op }
      if (context.address !== undefined) Object.assign(attributes, { [SEMCONV.dbSystem]: 'redis', [SEMCONV.dbOperation]: context.op }, serverAttributes(context.address))
      open.set(context, tracer.startSpan('echostore.l2', { kind: SpanKind.CLIENT, attributes }, parentHere()))
    },
    asyncEnd: endOpen,
  }

  loadChannel.start.bindStore(inLoad, (context) => context)
  const removers = [subscribeTracing(fetchChannel, fetchHandlers, onError), subscribeTracing(loadChannel, loadHandlers, onError), subscribeTracing(l2Channel, l2Handlers, onError)]
  return {
    unsubscribe() {
      for (const remove of removers) remove()
      loadChannel.start.unbindStore(inLoad)
    },
  }
}
