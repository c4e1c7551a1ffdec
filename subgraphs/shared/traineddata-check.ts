import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';

const gunzipAsync = promisify(gunzip);

// Tesseract's TessdataManager: an int32 entry count, then one int64 offset per entry (-1 when
// absent); entry 17 is the LSTM model the engine runs.
const LSTM_ENTRY = 17;
const MAX_ENTRIES = 100;

/**
 * Why the gzipped traineddata file cannot serve Tesseract's LSTM engine, or undefined when its
 * header is sound. tesseract.js answers a bad file by leaving its worker in a state that later
 * throws from an event listener (ending the process), so the file is checked before it is loaded.
 */
export async function traineddataProblem(file: string): Promise<string | undefined> {
  let data: Buffer;
  try {
    data = await gunzipAsync(await readFile(file));
  } catch (error) {
    return `${file} cannot be read as gzip (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
  const corrupt = `${file} is not a Tesseract traineddata file`;
  if (data.length < 4) return corrupt;
  const entries = data.readInt32LE(0);
  const tableEnd = 4 + 8 * entries;
  if (entries <= LSTM_ENTRY || entries > MAX_ENTRIES || data.length < tableEnd) return corrupt;
  let previous = tableEnd - 1;
  for (let i = 0; i < entries; i++) {
    const offset = Number(data.readBigInt64LE(4 + 8 * i));
    if (offset === -1) continue;
    if (offset <= previous || offset >= data.length) return corrupt;
    previous = offset;
  }
  if (Number(data.readBigInt64LE(4 + 8 * LSTM_ENTRY)) === -1) return `${file} holds no LSTM model`;
  return undefined;
}
