// Speed runs in columns. A catalog has far more of them than of anything else (the synthetic one: 500,000); as
// objects (a run, its provenance, its strings, its boxed numbers) each took ~400 bytes of heap, here ~90. Kept is what
// validate and compute read: a run's private fields and `maintained` are never published, and are not kept.
import type { RecordLane, SpeedRun } from '../schema/source.js';
import type { Located } from './records.js';

/** 2^32: a location is file index × LINES + line (as in records.ts). */
const LINES = 2 ** 32;
const HASH_BYTES = 32;

export class SpeedRuns implements Iterable<Located<SpeedRun>> {
  /** Model slugs, lanes and sources, each once; the columns hold their indexes. */
  private readonly names: string[] = [];
  private readonly nameIndex = new Map<string, number>();
  private readonly models: number[] = [];
  private readonly lanes: number[] = [];
  private readonly sources: number[] = [];
  private readonly tps: number[] = [];
  private readonly ttft: number[] = [];
  /** measured_at as milliseconds since the epoch: all that is read of it is its instant (toInstant). */
  private readonly times: number[] = [];
  /** evidence_sha256 as bytes, HASH_BYTES a run (the schema allows lowercase hex only, so it reads back the same). */
  private evidence = Buffer.alloc(HASH_BYTES * 1024);
  private readonly at: number[] = [];

  constructor(private readonly files: readonly string[] = []) {}

  /** Runs at hand as a set (no locations: line 0 of no file). */
  static of(runs: Iterable<SpeedRun>): SpeedRuns {
    const set = new SpeedRuns();
    for (const r of runs) set.add(r, 0, 0);
    return set;
  }

  get length(): number {
    return this.models.length;
  }

  add(r: SpeedRun, fileIndex: number, line: number): void {
    const i = this.models.length;
    if ((i + 1) * HASH_BYTES > this.evidence.length) {
      const grown = Buffer.alloc(this.evidence.length * 2);
      this.evidence.copy(grown);
      this.evidence = grown;
    }
    this.evidence.write(r.provenance.evidence_sha256, i * HASH_BYTES, HASH_BYTES, 'hex');
    this.models.push(this.name(r.model));
    this.lanes.push(this.name(r.lane));
    this.sources.push(this.name(r.provenance.source));
    this.tps.push(r.tokens_per_second);
    this.ttft.push(r.first_token_latency_ms);
    const t = r.measured_at;
    this.times.push(new Date(t.length === 10 ? `${t}T00:00:00Z` : t).getTime());
    this.at.push(fileIndex * LINES + line);
  }

  private name(s: string): number {
    let n = this.nameIndex.get(s);
    if (n === undefined) this.nameIndex.set(s, (n = this.names.push(s) - 1));
    return n;
  }

  model(i: number): string {
    return this.names[this.models[i]!]!;
  }
  lane(i: number): RecordLane {
    return this.names[this.lanes[i]!] as RecordLane;
  }
  source(i: number): string {
    return this.names[this.sources[i]!]!;
  }
  tokensPerSecond(i: number): number {
    return this.tps[i]!;
  }
  firstTokenLatencyMs(i: number): number {
    return this.ttft[i]!;
  }
  /** measured_at as an instant (validate.ts toInstant: UTC, milliseconds). */
  instant(i: number): string {
    return new Date(this.times[i]!).toISOString();
  }
  /** measured_at in milliseconds since the epoch: later is larger, as instants compare. */
  time(i: number): number {
    return this.times[i]!;
  }
  evidenceSha256(i: number): string {
    return this.evidence.toString('hex', i * HASH_BYTES, (i + 1) * HASH_BYTES);
  }
  /** The i-th run as a record (measured_at as its instant), for the rules that read records. */
  value(i: number): SpeedRun {
    return {
      model: this.model(i),
      lane: this.lane(i),
      tokens_per_second: this.tps[i]!,
      first_token_latency_ms: this.ttft[i]!,
      measured_at: this.instant(i),
      provenance: { source: this.source(i), evidence_sha256: this.evidenceSha256(i) },
    };
  }
  file(i: number): string {
    return this.files[Math.floor(this.at[i]! / LINES)]!;
  }
  line(i: number): number {
    return this.at[i]! % LINES;
  }
  /** Drops the runs from the i-th on (those of a file found unreadable after its first lines). */
  truncate(length: number): void {
    for (const column of [this.models, this.lanes, this.sources, this.tps, this.ttft, this.times, this.at])
      column.length = length;
  }
  *[Symbol.iterator](): Iterator<Located<SpeedRun>> {
    for (let i = 0; i < this.length; i++) yield { value: this.value(i), file: this.file(i), line: this.line(i) };
  }
}
