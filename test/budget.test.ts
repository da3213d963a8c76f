// The writer's budget (publication/budget.ts): who goes, in which order, and that an item larger than the whole budget
// still goes. No clock: a take's promise is looked at once every callback already due has run.
import { setImmediate as settled } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Budget } from '../src/publication/budget.js';

/** The takes of `budget`, by name, with the names of those that have gone ahead so far. */
function takes(budget: Budget) {
  const gone: string[] = [];
  return {
    gone,
    take: (name: string, n: number) => budget.take(n).then(() => void gone.push(name)),
  };
}

describe('Budget', () => {
  it('lets takes go at once while anything is left, the last one past the limit', async () => {
    const budget = new Budget(10);
    const t = takes(budget);
    void t.take('a', 6);
    void t.take('b', 6);
    void t.take('c', 1);
    await settled();
    expect(t.gone).toEqual(['a', 'b']);
  });

  it('wakes the waiting on give, first come first served, for as long as anything is left', async () => {
    const budget = new Budget(4);
    const t = takes(budget);
    await t.take('full', 4);
    void t.take('a', 2);
    void t.take('b', 1);
    void t.take('c', 3);
    void t.take('d', 1);
    await settled();
    expect(t.gone).toEqual(['full']);
    budget.give(1); // 3 spent: a goes (5), and nothing is left for b
    await settled();
    expect(t.gone).toEqual(['full', 'a']);
    budget.give(4); // 1 spent: b (2), c (5), and d waits
    await settled();
    expect(t.gone).toEqual(['full', 'a', 'b', 'c']);
    budget.give(5);
    await settled();
    expect(t.gone).toEqual(['full', 'a', 'b', 'c', 'd']);
  });

  it('hands the room over at give, so a newcomer cannot take it before the one waiting resumes', async () => {
    const budget = new Budget(4);
    const t = takes(budget);
    await t.take('full', 4);
    void t.take('large', 4);
    budget.give(4); // large goes, and spends all of it again
    void t.take('small', 1);
    await settled();
    expect(t.gone).toEqual(['full', 'large']);
    budget.give(4);
    await settled();
    expect(t.gone).toEqual(['full', 'large', 'small']);
  });

  it('lets an item larger than the whole budget go when nothing is held, and once all is given back', async () => {
    const budget = new Budget(10);
    const t = takes(budget);
    await t.take('huge', 25); // nothing held: it goes
    void t.take('next', 1);
    await settled();
    expect(t.gone).toEqual(['huge']);
    budget.give(25);
    await settled();
    expect(t.gone).toEqual(['huge', 'next']);
    void t.take('huge again', 25); // 1 held, something left: it goes too
    await settled();
    expect(t.gone).toEqual(['huge', 'next', 'huge again']);
  });

  it('makes a take of nothing wait while the budget is spent, and spend nothing', async () => {
    const budget = new Budget(2);
    const t = takes(budget);
    await t.take('full', 2);
    void t.take('none', 0);
    void t.take('one', 1);
    await settled();
    expect(t.gone).toEqual(['full']);
    budget.give(1); // none goes and leaves the 1 for one
    await settled();
    expect(t.gone).toEqual(['full', 'none', 'one']);
  });
});
