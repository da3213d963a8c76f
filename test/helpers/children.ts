// The child processes tests start (the CLI, servers, scripts). A test stops its own; whatever is still running when
// its file's tests are over (a test failed or timed out before stopping it) is killed then (test/setup.ts), so that
// nothing outlives the run or holds a port, a lock or a CPU for the next file.
import type { ChildProcess } from 'node:child_process';

const live = new Set<ChildProcess>();

export function tracked<T extends ChildProcess>(child: T): T {
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

export async function killStrays(): Promise<void> {
  await Promise.all(
    [...live].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          // SIGTERM lets a script stop what it started; cleanup, not a test, so a clock may end the wait.
          const hard = setTimeout(() => child.kill('SIGKILL'), 5000);
          child.once('exit', () => {
            clearTimeout(hard);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
  live.clear();
}
