/** Where the gateway reads a publication from: a local folder or a remote static host. Paths come from the manifest only. */
export interface Origin {
  readonly description: string;
  /** An id of the live publication, cheap to poll: a new id means a new publication was switched in. */
  currentId(): Promise<string>;
  /** The bytes of one file of publication `id`. */
  read(id: string, path: string): Promise<Buffer>;
}
