// The records of the JSON Lines files, each checked against its schema as its line is read: only the checked value
// and a compact location stay (a file index and a line in one number), not the raw record, its text or a location
// object per record. The schema checks' wording lives here, for the YAML files (validate.ts) as for these.
import type { z } from 'zod';
import type { SourceIssue } from '../errors.js';
import { BenchmarkResult, OfferRecord, PriceHistoryRecord, PriceObservation, SpeedRun } from '../schema/source.js';

/** A record of a file: which one, and the line it is on. */
export interface Located<T> {
  value: T;
  file: string;
  line: number;
}

/** 2^32: a location is file index × LINES + line, exact in a double for any file count and line a file can hold. */
const LINES = 2 ** 32;

/** The fields whose values repeat from record to record (a day: eval_date), each kept once. */
const SHARED = ['model', 'lane', 'metric', 'provider', 'eval_date'] as const;

/**
 * Checked records of one kind, in the order read, with their locations; `files` is shared by the kinds, and so is
 * `strings`, the one copy of each repeated name (model, lane, metric, source): JSON.parse gives every record its own.
 */
export class RecordSet<T> implements Iterable<Located<T>> {
  readonly values: T[] = [];
  private readonly at: number[] = [];
  constructor(
    private readonly files: readonly string[],
    private readonly strings: Map<string, string>,
  ) {}
  get length(): number {
    return this.values.length;
  }
  add(value: T, fileIndex: number, line: number): void {
    const r = value as Record<string, unknown> & { provenance?: { source?: unknown } };
    for (const k of SHARED) if (typeof r[k] === 'string') r[k] = this.shared(r[k]);
    if (typeof r.provenance?.source === 'string') r.provenance.source = this.shared(r.provenance.source);
    this.values.push(value);
    this.at.push(fileIndex * LINES + line);
  }
  private shared(s: string): string {
    const known = this.strings.get(s);
    if (known !== undefined) return known;
    this.strings.set(s, s);
    return s;
  }
  file(i: number): string {
    return this.files[Math.floor(this.at[i]! / LINES)]!;
  }
  line(i: number): number {
    return this.at[i]! % LINES;
  }
  /** Drops the records from the i-th on (those of a file found unreadable after its first lines). */
  truncate(length: number): void {
    this.values.length = length;
    this.at.length = length;
  }
  *[Symbol.iterator](): Iterator<Located<T>> {
    for (let i = 0; i < this.values.length; i++)
      yield { value: this.values[i]!, file: this.file(i), line: this.line(i) };
  }
}

/** The schema of each kind of JSON Lines file. */
export const RECORD_SCHEMAS = {
  speed: SpeedRun,
  benchmarks: BenchmarkResult,
  prices: PriceObservation,
  offers: OfferRecord,
  priceHistory: PriceHistoryRecord,
} as const;
export type RecordKind = keyof typeof RECORD_SCHEMAS;
/** Where checked records are kept: a RecordSet, or the speed runs' columns (speed-runs.ts). */
export interface RecordSink {
  add(value: unknown, fileIndex: number, line: number): void;
}

export const fieldOf = (p: readonly PropertyKey[]) =>
  p.map((k, i) => (typeof k === 'number' ? `[${k}]` : `${i ? '.' : ''}${String(k)}`)).join('') || undefined;

/**
 * The messages zod writes itself are for programmers ("Invalid input: expected string, received undefined"); a
 * missing field is "required" (the schemas' own messages take precedence over this).
 */
export const plainErrors = {
  error: (iss: { code: string; input?: unknown }) =>
    iss.code === 'invalid_type' && iss.input === undefined ? 'required' : undefined,
};

/**
 * A value checked against a schema. zod checks about twice as fast without message options, and plainErrors only
 * words the problems, so it is passed only for a value that fails (500,000 speed runs: about 0.9 s less).
 */
export function checked<S extends z.ZodType>(schema: S, value: unknown): z.ZodSafeParseResult<z.output<S>> {
  const fast = schema.safeParse(value);
  return fast.success ? fast : schema.safeParse(value, plainErrors);
}

/** zod reports unknown keys once, at the object; split them so that each names its own field (and line). */
export function located(issues: z.core.$ZodIssue[]): { path: PropertyKey[]; message: string }[] {
  return issues.flatMap((iss) =>
    iss.code === 'unrecognized_keys'
      ? iss.keys.map((k) => ({ path: [...iss.path, k], message: 'unknown field: not in the schema (a typo?)' }))
      : [{ path: iss.path, message: iss.message }],
  );
}

/** One JSON Lines record against its kind's schema: kept in `set`, or its problems in `issues`. */
export function checkRecord<K extends RecordKind>(
  kind: K,
  value: unknown,
  set: RecordSink,
  at: { index: number; file: string; line: number },
  issues: SourceIssue[],
): void {
  const r = checked(RECORD_SCHEMAS[kind], value);
  if (r.success) set.add(r.data, at.index, at.line);
  else
    for (const iss of located(r.error.issues))
      issues.push({ file: at.file, line: at.line, field: fieldOf(iss.path), message: iss.message });
}
