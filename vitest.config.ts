import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Gateway tests start real processes and servers on loopback ports; keep files from competing for the 2 cores.
    fileParallelism: false,
  },
});
