import { defineConfig } from 'vitest/config'

export default defineConfig({
  // Examples import the package by name ('echostore', 'echostore/redis', ...): tsconfig.json's `paths` map those to src/.
  resolve: { tsconfigPaths: true },
  test: {
    include: ['spec/**/*.spec.ts'],
    typecheck: { enabled: true, include: ['spec/**/*.test-d.ts'] },
    setupFiles: ['spec/support/no-unhandled.ts'],
    // Starts the local Redis Cluster and Sentinel set of the topology specs when they are not up.
    globalSetup: ['spec/support/topology-setup.ts'],
    // vitest itself fails the run on an unhandled rejection; the setup file also fails the test that caused it.
    dangerouslyIgnoreUnhandledErrors: false,
    testTimeout: 20_000,
  },
})
