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
