// Waiting on a condition, not on the clock: no bound but the test's own timeout, so a slow machine only waits longer.

/** A short pause between two looks at something another task changes (a poll, a child process, a file). */
export const tick = (ms = 10) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Resolves once `done()` holds (it may be async), looking again after each tick. */
export async function until(done: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await done())) await tick();
}
