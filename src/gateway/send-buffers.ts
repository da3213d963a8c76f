// Reused buffers for answers sent in pieces (composed list pages). The pieces are copied into one buffer and sent
// with one write; the buffer comes back once node:http reports the response finished. Why not write the pieces one
// by one: a page of 100 items with sections is 300-500 pieces, and each res.write() costs about 0.2 us of JavaScript
// (a page took twice as long). Why not a new buffer per answer: composed pages are mostly sent once, and a fresh
// 30 KB body per answer made V8 run several mark-compacts a second for the external memory.
//
// 'finish' is emitted once the last write's callback has run: the bytes are with the kernel, or the connection is
// gone and libuv will never read them. A response that never finishes keeps its buffer until the collector takes it;
// the pool then makes another.
//
// Spares kept: at most perSize per power of two from 16 KiB to `largest`, under 16 MiB in all with the defaults; the
// default publication's largest possible composed page (its 100 largest items with every section, in Russian) is
// 330 KB, so a few MiB in practice.
export class SendBuffers {
  private readonly free = new Map<number, Buffer[]>();
  /** perSize: spare buffers kept per size; largest: bigger answers get a buffer of their own, not pooled. */
  constructor(
    private readonly perSize = 8,
    private readonly largest = 1 << 20,
  ) {}

  /** A buffer of at least `bytes` (a power of two of 16 KiB or more, when pooled). Its contents are not zeroed. */
  take(bytes: number): Buffer {
    if (bytes > this.largest) return Buffer.allocUnsafeSlow(bytes);
    const size = Math.max(16_384, 2 ** Math.ceil(Math.log2(bytes)));
    return this.free.get(size)?.pop() ?? Buffer.allocUnsafeSlow(size);
  }

  /** Hands a buffer from take() back once nothing reads it any more. */
  give(buf: Buffer): void {
    const size = buf.length;
    if (size > this.largest || size < 16_384 || (size & (size - 1)) !== 0) return;
    let list = this.free.get(size);
    if (!list) this.free.set(size, (list = []));
    if (list.length < this.perSize) list.push(buf);
  }

  /** The pieces joined into a buffer from the pool, sent as the whole body of `res`; the buffer returns when done. */
  end(res: { end(chunk: Buffer, cb: () => void): unknown }, pieces: readonly Buffer[], bytes: number): void {
    const buf = this.take(bytes);
    let at = 0;
    for (const piece of pieces) {
      buf.set(piece, at);
      at += piece.length;
    }
    if (at !== bytes) throw new Error(`pieces hold ${at} bytes, the answer declares ${bytes}`);
    res.end(buf.subarray(0, at), () => this.give(buf));
  }
}
