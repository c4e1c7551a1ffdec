import { createHash } from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import { Document, Packer, Paragraph, TextRun } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import sharp from 'sharp';
import { encodePng, renderText } from '../subgraphs/inference/ocr/text-image.js';

// Real files for the document tests, built at run time so that no binary fixture is committed and
// every file's content is known to the test that reads it.

export interface DocumentFixture {
  filename: string;
  /** The type the sniffer must find (null: the file must be refused). */
  mime: string | null;
  bytes: Uint8Array;
}

/** The words on the rendered images; the bitmap font has upper-case letters, digits and spaces only. */
export const OCR_LINES = ['INVOICE NUMBER 4711', 'ACME CONSULTING GMBH', 'TOTAL AMOUNT 1250 EUR'];

export const TEXT_PDF_PAGES = [
  ['Invoice No. INV-2026-0042', 'Date: 23.11.2026', 'Total due: EUR 1.234,56', 'Pay to IBAN DE89 3704 0044 0532 0130 00'],
  ['Thank you for your business.', 'Questions: billing@acme.example'],
];

/** A PDF with a text layer, one page per entry, each line drawn in Helvetica. */
export async function textPdf(pages: string[][] = TEXT_PDF_PAGES): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (const lines of pages) {
    const page = pdf.addPage([595, 842]);
    lines.forEach((line, index) => page.drawText(line, { x: 50, y: 780 - index * 20, size: 12, font }));
  }
  return pdf.save();
}

/** A PNG of black text on white that Tesseract reads (see text-image.ts for how it is drawn). */
export function textPng(lines: string[] = OCR_LINES, scale = 4): Buffer {
  return encodePng(renderText(lines, scale));
}

/** The same rendered text as JPEG, TIFF or WebP (through sharp). */
export async function textImage(format: 'jpeg' | 'tiff' | 'webp', lines: string[] = OCR_LINES): Promise<Buffer> {
  const image = sharp(textPng(lines));
  if (format === 'jpeg') return image.jpeg({ quality: 95 }).toBuffer();
  if (format === 'tiff') return image.tiff().toBuffer();
  return image.webp({ lossless: true }).toBuffer();
}

/**
 * A scanned-style PDF: each page is an image of rendered text and nothing else, so there is no
 * text layer and the text can only come from OCR. `textPages` adds pages with a text layer first
 * (for a mixed document).
 */
export async function scannedPdf(scannedPages: string[][] = [OCR_LINES], textPages: string[][] = []): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (const lines of textPages) {
    const page = pdf.addPage([595, 842]);
    lines.forEach((line, index) => page.drawText(line, { x: 50, y: 780 - index * 20, size: 12, font }));
  }
  for (const lines of scannedPages) {
    const png = await pdf.embedPng(textPng(lines));
    const page = pdf.addPage([png.width, png.height]);
    page.drawImage(png, { x: 0, y: 0, width: png.width, height: png.height });
  }
  return pdf.save();
}

export const DOCX_PARAGRAPHS = ['Employment Contract', 'This agreement is made between Acme GmbH and Jane Doe.', 'Start date: 1 December 2026.'];

/** A Word document (the `docx` package), one paragraph per entry. */
export async function docxFile(paragraphs: string[] = DOCX_PARAGRAPHS): Promise<Buffer> {
  const document = new Document({
    sections: [{ children: paragraphs.map((text) => new Paragraph({ children: [new TextRun(text)] })) }],
  });
  return Packer.toBuffer(document);
}

export const HTML_PAGE = `<!DOCTYPE html>
<html><head><title>Quarterly report</title><style>body { color: red; }</style>
<script>var secret = "do not index";</script></head>
<body><h1>Quarterly report</h1><p>Revenue grew by 12&nbsp;% &amp; costs fell.</p>
<p>Contact: &lt;reports@acme.example&gt;</p></body></html>
`;

export const CSV_TEXT = 'date,description,amount\n2026-11-01,Office rent,1200.00\n2026-11-15,Laptop,899.99\n';
export const MARKDOWN_TEXT = '# Meeting notes\n\n- Budget approved for **2027**\n- Next meeting on 2026-12-01\n';
export const PLAIN_TEXT = 'Dear Ms Smith,\n\nthank you for your letter of 20 November 2026.\n\nKind regards,\nJohn\n';

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

/** Bytes that start like a PDF and then are not one. */
export function corruptPdf(): Uint8Array {
  return utf8('%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R\nthis is not a pdf body at all \u0001\u0002\n%%EOF\n');
}

/**
 * A minimal PDF encrypted with the standard security handler (revision 2, RC4 40-bit) and a
 * non-empty user password, so that a reader without the password must refuse it. pdf-lib cannot
 * encrypt; the O and U entries are computed here as PDF 1.7 §7.6.3.3-4 (algorithms 3 and 4) say.
 */
export function encryptedPdf(userPassword = 'secret', ownerPassword = 'owner'): Uint8Array {
  const pad = Buffer.from('28BF4E5E4E758A4164004E56FFFA01082E2E00B6D0683E802F0CA9FE6453697A', 'hex');
  const padded = (password: string): Buffer => Buffer.concat([Buffer.from(password, 'latin1'), pad]).subarray(0, 32);
  const id = createHash('md5').update('document-fixtures').digest();
  const permissions = -44;
  const ownerKey = createHash('md5').update(padded(ownerPassword)).digest().subarray(0, 5);
  const o = rc4(ownerKey, padded(userPassword));
  const p = Buffer.alloc(4);
  p.writeInt32LE(permissions);
  const key = createHash('md5').update(Buffer.concat([padded(userPassword), o, p, id])).digest().subarray(0, 5);
  const u = rc4(key, pad);
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>',
    `<< /Filter /Standard /V 1 /R 2 /O <${o.toString('hex')}> /U <${u.toString('hex')}> /P ${permissions} >>`,
  ];
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    offsets.push(body.length);
    body += `${index + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) body += `${String(offset).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Encrypt 4 0 R /ID [<${id.toString('hex')}> <${id.toString('hex')}>] >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

function rc4(key: Uint8Array, data: Uint8Array): Buffer {
  const s = Array.from({ length: 256 }, (_, i) => i);
  let j = 0;
  for (let i = 0; i < 256; i++) {
    j = (j + s[i] + key[i % key.length]) & 0xff;
    [s[i], s[j]] = [s[j], s[i]];
  }
  const out = Buffer.alloc(data.length);
  let i = 0;
  j = 0;
  for (let n = 0; n < data.length; n++) {
    i = (i + 1) & 0xff;
    j = (j + s[i]) & 0xff;
    [s[i], s[j]] = [s[j], s[i]];
    out[n] = data[n] ^ s[(s[i] + s[j]) & 0xff];
  }
  return out;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** A zip archive (deflated entries, local headers and central directory) of the given files. */
export function zipArchive(entries: Record<string, string | Uint8Array>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, content] of Object.entries(entries)) {
    const data = typeof content === 'string' ? Buffer.from(content) : Buffer.from(content);
    const compressed = deflateRawSync(data);
    const nameBytes = Buffer.from(name);
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(compressed.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(compressed.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, compressed);
    centrals.push(central, nameBytes);
    offset += local.length + nameBytes.length + compressed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(centrals.length / 2, 8);
  end.writeUInt16LE(centrals.length / 2, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** A zip whose [Content_Types].xml claims a Word document but which has no word/document.xml. */
export function fakeDocx(): Buffer {
  return zipArchive({
    '[Content_Types].xml':
      '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
    'payload.bin': 'not a word document',
  });
}

/** The start of a 64-bit Linux executable (ELF header), padded with zeros. */
export function elfBinary(): Buffer {
  const bytes = Buffer.alloc(256);
  Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]).copy(bytes);
  bytes.writeUInt16LE(2, 16); // ET_EXEC
  bytes.writeUInt16LE(0x3e, 18); // x86-64
  return bytes;
}

/** Every fixture, named; `mime` is what the sniffer must answer (null = refused). */
export async function documentFixtures(): Promise<Record<string, DocumentFixture>> {
  return {
    textPdf: { filename: 'invoice.pdf', mime: 'application/pdf', bytes: await textPdf() },
    scannedPdf: { filename: 'scan.pdf', mime: 'application/pdf', bytes: await scannedPdf() },
    png: { filename: 'invoice.png', mime: 'image/png', bytes: textPng() },
    jpeg: { filename: 'invoice.jpg', mime: 'image/jpeg', bytes: await textImage('jpeg') },
    tiff: { filename: 'invoice.tif', mime: 'image/tiff', bytes: await textImage('tiff') },
    webp: { filename: 'invoice.webp', mime: 'image/webp', bytes: await textImage('webp') },
    docx: { filename: 'contract.docx', mime: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', bytes: await docxFile() },
    html: { filename: 'report.html', mime: 'text/html', bytes: utf8(HTML_PAGE) },
    csv: { filename: 'expenses.csv', mime: 'text/csv', bytes: utf8(CSV_TEXT) },
    markdown: { filename: 'notes.md', mime: 'text/markdown', bytes: utf8(MARKDOWN_TEXT) },
    text: { filename: 'letter.txt', mime: 'text/plain', bytes: utf8(PLAIN_TEXT) },
    corruptPdf: { filename: 'broken.pdf', mime: 'application/pdf', bytes: corruptPdf() },
    encryptedPdf: { filename: 'locked.pdf', mime: 'application/pdf', bytes: encryptedPdf() },
    // The extension lies: a PDF named like a picture, a PNG named like a text file.
    lyingPdf: { filename: 'holiday.png', mime: 'application/pdf', bytes: await textPdf() },
    lyingPng: { filename: 'notes.txt', mime: 'image/png', bytes: textPng() },
    // Refused whatever their name says.
    elf: { filename: 'report.pdf', mime: null, bytes: elfBinary() },
    zip: { filename: 'contract.docx', mime: null, bytes: zipArchive({ 'readme.txt': 'hello' }) },
    fakeDocx: { filename: 'contract.docx', mime: null, bytes: fakeDocx() },
  };
}
