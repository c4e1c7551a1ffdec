import sharp from 'sharp';

export interface DecodedImage {
  format: string;
  width: number;
  height: number;
  channels: number;
  /** Raw pixels, row by row. */
  data: Buffer;
}

/** A base64 image decoded to its format, size and raw pixels. */
export async function decode(base64: string): Promise<DecodedImage> {
  const input = Buffer.from(base64, 'base64');
  const { format } = await sharp(input).metadata();
  const { data, info } = await sharp(input).raw().toBuffer({ resolveWithObject: true });
  return { format, width: info.width, height: info.height, channels: info.channels, data };
}

/** The RGB of the pixel at x, y. */
export function pixel(image: DecodedImage, x: number, y: number): [number, number, number] {
  const at = (y * image.width + x) * image.channels;
  return [image.data[at], image.data[at + 1], image.data[at + 2]];
}

/** Every distinct RGB in the image, as "r,g,b" strings. */
export function colours(image: DecodedImage): Set<string> {
  const seen = new Set<string>();
  for (let y = 0; y < image.height; y++) for (let x = 0; x < image.width; x++) seen.add(pixel(image, x, y).join(','));
  return seen;
}

/** A PNG of width x height in one colour, as base64. */
export async function solid(width: number, height: number, background = { r: 200, g: 40, b: 90 }): Promise<string> {
  return (await sharp({ create: { width, height, channels: 3, background } }).png().toBuffer()).toString('base64');
}
