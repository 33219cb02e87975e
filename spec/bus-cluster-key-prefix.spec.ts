/**
 * The bus on an ioredis Cluster client with a `keyPrefix` of its own (which EchoStore allows): its
 * shard channel is the bare channel every other client uses. ioredis writes its keyPrefix before
 * `SPUBLISH`'s channel (a key position), while the subscription is on the bare channel, so such a
 * bus once published where nobody listened, and `publish()` still resolved. On the shared cluster
 * (7100-7105), on a channel of the spec's own.
 */
import { once } from 'node:events'
import { Cluster } from 'ioredis'
import { expect, it } from 'vitest'
import { redisBus } from '../src/redis.js'
import { testPrefix } from './support/redis.js'
import { CLUSTER_URLS, describeTopology } from './support/topology.js'

const nodes = CLUSTER_URLS.slice(0, 3).map((url) => ({ host: new URL(url).hostname, port: Number(new URL(url).port) }))

describeTopology('the bus on a cluster client with a keyPrefix of its own', () => {
  it('is heard by buses on prefixed and plain clients, in the order it published', async () => {
    const namespace = testPrefix('bus-key-prefix')
    const prefixed = new Cluster(nodes, { keyPrefix: 'app:' })
    const plain = new Cluster(nodes)
    await Promise.all([once(prefixed, 'ready'), once(plain, 'ready')])
    const publisher = redisBus({ client: prefixed, namespace })
    const onPrefixed = redisBus({ client: prefixed, namespace })
    const onPlain = redisBus({ client: plain, namespace })
    try {
      await Promise.all([publisher.subscribed({ timeout: 5_000 }), onPrefixed.subscribed({ timeout: 5_000 }), onPlain.subscribed({ timeout: 5_000 })])
      /** The tables of the messages `bus` hears, and a promise of the one named `last`. */
      const hear = (bus: typeof publisher, last: string) => {
        const heard: string[] = []
        const done = new Promise<void>((resolve) =>
          bus.subscribe((delivery) => {
            if (delivery.type !== 'message') return
            heard.push(delivery.message.table)
            if (delivery.message.table === last) resolve()
          }),
        )
        return { heard, done }
      }
      const byPrefixed = hear(onPrefixed, 'two')
      const byPlain = hear(onPlain, 'two')
      await publisher.publish({ table: 'one', kind: 'clear', origin: 'prefixed' })
      await onPlain.publish({ table: 'two', kind: 'clear', origin: 'plain' })
      await Promise.all([byPrefixed.done, byPlain.done])
      expect(byPrefixed.heard).toEqual(['one', 'two'])
      expect(byPlain.heard).toEqual(['one', 'two'])
    } finally {
      await Promise.all([publisher.close(), onPrefixed.close(), onPlain.close()])
      prefixed.disconnect()
      plain.disconnect()
    }
  })
})
