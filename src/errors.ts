// Library code throws these; only src/cli.ts turns them into messages and exit codes.

/** One problem in the source data, located as precisely as the format allows. */
export interface SourceIssue {
  file: string;
  line?: number;
  record?: string;
  field?: string;
  message: string;
}

export const formatIssue = (i: SourceIssue): string =>
  `${i.file}${i.line ? `:${i.line}` : ''}: ${i.record ? `${i.record}: ` : ''}${i.field ? `${i.field}: ` : ''}${i.message}`;

/**
 * A value from the data, quoted for a message: JSON-escaped (a line break or a control character shows as \\n, \\u0007)
 * and cut to `max` characters, its length said, so that a 200 MB value costs a line, not the message's size.
 */
export function quoted(value: unknown, max = 80): string {
  const text = typeof value === 'string' ? value : String(value);
  if (text.length <= max) return JSON.stringify(text);
  return `${JSON.stringify(text.slice(0, max)).slice(0, -1)}…" (${text.length.toLocaleString('en-US')} characters)`;
}

export class ValidationError extends Error {
  /** `kind`: what the issues are, in the plural ("warnings, refused by --strict"); by default problems. */
  constructor(
    readonly issues: SourceIssue[],
    kind?: string,
  ) {
    super(
      `${issues.length} ${kind ?? (issues.length === 1 ? 'problem' : 'problems')} in the source data:\n` +
        issues.map((i) => `  ${formatIssue(i)}`).join('\n'),
    );
    this.name = 'ValidationError';
  }
}

/** A mistake in how a command was called (a bad --out, a missing folder): the message says what to do. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * Another process holds or moved what this one needed (a remote's publish lock, its pointer), and nothing was
 * changed: run again later. Exit code 75, EX_TEMPFAIL of sysexits.h, so that a CI step can tell it from a failure.
 */
export class RemoteBusy extends Error {
  static readonly exitCode = 75;
  constructor(message: string) {
    super(message);
    this.name = 'RemoteBusy';
  }
}

/** Any failure of a command whose errors all exit with one code (diff: 2, as diff(1), since 1 means "changes"). */
export class CommandFailed extends Error {
  constructor(
    readonly failure: unknown,
    readonly exitCode: number,
  ) {
    super(failure instanceof Error ? failure.message : String(failure));
    this.name = 'CommandFailed';
  }
}

/** An error already told to the operator by another process (a --workers worker's, by the primary): exit 1, silently. */
export class AlreadyReported extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'AlreadyReported';
  }
}
