/** Little-endian GGUF primitives appended in order; `pad` aligns to the file's alignment. */
export class GgufByteSink {
  private readonly chunks: Buffer[] = [];
  length = 0;

  constructor(private readonly alignment: number) {}

  push(buffer: Buffer): void {
    this.chunks.push(buffer);
    this.length += buffer.length;
  }
  u32(value: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(value);
    this.push(b);
  }
  i32(value: number): void {
    const b = Buffer.alloc(4);
    b.writeInt32LE(value);
    this.push(b);
  }
  u64(value: number): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(value));
    this.push(b);
  }
  f32(value: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatLE(value);
    this.push(b);
  }
  string(value: string): void {
    const bytes = Buffer.from(value, 'utf8');
    this.u64(bytes.length);
    this.push(bytes);
  }
  pad(): void {
    const rest = this.length % this.alignment;
    if (rest !== 0) this.push(Buffer.alloc(this.alignment - rest));
  }
  buffer(): Buffer {
    return Buffer.concat(this.chunks);
  }
}
