// Whether a process id names a live process on this host: how a build's lock and a publish's lock tell a holder that
// is gone from one that still works.
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0); // signal 0: the existence and permission check alone
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // alive, someone else's
  }
}
