// A budget (bytes, or turns) shared by tasks that wait while it is spent: what bounds the writer's bodies in memory,
// its compressions under way, its reads of a remote release, and a streamed body's chunks in the pool's shared slots.

/**
 * Tasks take from the budget while anything is left of it, first come, first served, and may spend past its limit:
 * an item larger than the whole budget goes ahead once the others have given back enough, rather than never.
 */
export class Budget {
  private spent = 0;
  private readonly waiting: { n: number; go: () => void }[] = [];

  constructor(readonly limit: number) {}

  /**
   * Spends `n` at once while anything is left and no one waits before it, else once give() leaves something for it.
   * The spending is done here, not when the caller resumes, so that no one can take the same room in between.
   */
  take(n: number): Promise<void> {
    if (!this.waiting.length && this.spent < this.limit) {
      this.spent += n;
      return Promise.resolve();
    }
    return new Promise((go) => {
      this.waiting.push({ n, go });
    });
  }

  /** Gives back `n`, and lets the waiting go in order for as long as anything is left. */
  give(n: number): void {
    this.spent -= n;
    while (this.waiting.length && this.spent < this.limit) {
      const next = this.waiting.shift()!;
      this.spent += next.n;
      next.go();
    }
  }
}
