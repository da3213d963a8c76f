import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // No test waits on the clock: each waits for the event it needs (a line printed, a poll done, a process
    // exited). These limits only end a test that hangs; a loaded machine just takes longer.
    testTimeout: 600_000,
    hookTimeout: 600_000,
    // Files run in parallel (vitest's default: one worker per core but one): gateway tests call the handler in
    // process (test/helpers/request.ts), servers and processes listen on ports the system picks.
    fileParallelism: true,
    // Ends each file's child processes still running (a test that failed before stopping its own).
    setupFiles: ['test/setup.ts'],
  },
});
