import { crc32, inflateRawSync } from 'node:zlib';

/**
 * The ZIP container of an XLSX (APPNOTE.TXT, sections 4.3.7-4.3.16), read from its central directory
 * with a budget on the bytes it inflates to, and written again as a plain archive of exactly what
 * was read. read-excel-file inflates every part it wants with no limit (an 8 MiB workbook can hold
 * gigabytes of XML): it is handed the rewritten archive, so it reads only bytes that were counted.
 *
 * Read here rather than with fflate (installed with read-excel-file): its unzipSync inflates each
 * entry whole whatever its declared size says (a 1 MB file claiming 1,000 bytes held 1 GiB: 4.1 s,
 * truncated without an error), and its streaming Unzip, which could stop at a budget, finds the
 * end of an entry with a data descriptor (every part LibreOffice and write-excel-file write) by
 * scanning its compressed bytes for a signature: a valid sheet whose deflated bytes held
 * `PK\x01\x02` was refused, and an embedded .docx's parts were read as the workbook's
 * (fflate issues #208 and #243, unfixed in 0.8.3).
 */
export interface ZipPart {
  name: string;
  /** the name's bytes as the archive stores them, and whether they are UTF-8 (flag bit 11) */
  rawName: Buffer;
  utf8: boolean;
  data: Buffer;
}

const END = 0x06054b50;
const END64 = 0x06064b50;
const END64_LOCATOR = 0x07064b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const SATURATED = 0xffffffff;

/** A refusal of the archive: damaged or not read here (`overBudget` false), or holding more than the budget. */
export class ZipRefusal extends Error {
  override readonly name = 'ZipRefusal';
  constructor(
    message: string,
    readonly overBudget = false,
  ) {
    super(message);
  }
}

/**
 * The parts `wanted` picks, inflated, in archive order (a name stored twice is read twice). More
 * than `budgetBytes` inflated in all is refused with `overBudget`: before anything is inflated when
 * the central directory declares it, and while inflating when the declared sizes lie, as zlib stops
 * at the budget (maxOutputLength), so a bomb costs at most the budget in time and memory.
 */
export function readZipParts(bytes: Uint8Array, wanted: (name: string) => boolean, budgetBytes: number, overBudget: string): ZipPart[] {
  const zip = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const entries = centralDirectory(zip).filter((e) => !e.name.endsWith('/') && wanted(e.name));
  // storedZip counts entries in 16 bits; a workbook has tens of parts.
  if (entries.length > 0xffff) throw new ZipRefusal(`more than ${0xffff} parts`);
  if (entries.reduce((n, e) => n + e.size, 0) > budgetBytes) throw new ZipRefusal(overBudget, true);
  let inflated = 0;
  return entries.map((e) => {
    if (e.flags & 1) throw new ZipRefusal(`${e.name} is encrypted`);
    if (zip.length < e.local + 30 || zip.readUInt32LE(e.local) !== LOCAL) throw new ZipRefusal(`${e.name}: no local header where the central directory points`);
    const start = e.local + 30 + zip.readUInt16LE(e.local + 26) + zip.readUInt16LE(e.local + 28);
    if (start + e.compressedSize > zip.length) throw new ZipRefusal(`${e.name} runs past the end of the file`);
    const packed = zip.subarray(start, start + e.compressedSize);
    const left = budgetBytes - inflated;
    let data: Buffer;
    if (e.method === 0) {
      if (packed.length > left) throw new ZipRefusal(overBudget, true);
      data = Buffer.from(packed);
    } else if (e.method === 8) {
      try {
        // maxOutputLength must be at least 1; an empty part inflates to nothing either way.
        data = inflateRawSync(packed, { maxOutputLength: Math.max(1, left) });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw new ZipRefusal(overBudget, true);
        throw new ZipRefusal(`${e.name}: ${(error as Error).message}`);
      }
      if (data.length > left) throw new ZipRefusal(overBudget, true);
    } else {
      throw new ZipRefusal(`${e.name} uses compression method ${e.method} (only stored and deflated parts are read)`);
    }
    inflated += data.length;
    return { name: e.name, rawName: e.rawName, utf8: (e.flags & 0x800) !== 0, data };
  });
}

interface Entry {
  name: string;
  rawName: Buffer;
  flags: number;
  method: number;
  compressedSize: number;
  /** the declared inflated size: a claim, checked while inflating */
  size: number;
  local: number;
}

function centralDirectory(zip: Buffer): Entry[] {
  const end = findEnd(zip);
  let count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  if ((count === 0xffff || at === SATURATED) && end >= 20 && zip.readUInt32LE(end - 20) === END64_LOCATOR) {
    const end64 = safeNumber(zip.readBigUInt64LE(end - 12));
    if (end64 + 56 > zip.length || zip.readUInt32LE(end64) !== END64) throw new ZipRefusal('its ZIP64 end of central directory is missing');
    count = safeNumber(zip.readBigUInt64LE(end64 + 32));
    at = safeNumber(zip.readBigUInt64LE(end64 + 48));
  }
  const entries: Entry[] = [];
  for (let n = 0; n < count; n++) {
    if (at + 46 > zip.length || zip.readUInt32LE(at) !== CENTRAL) throw new ZipRefusal('its central directory is damaged');
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const next = at + 46 + nameLength + extraLength + zip.readUInt16LE(at + 32);
    if (next > zip.length) throw new ZipRefusal('its central directory is damaged');
    const rawName = Buffer.from(zip.subarray(at + 46, at + 46 + nameLength));
    const entry: Entry = {
      name: rawName.toString('utf8'),
      rawName,
      flags: zip.readUInt16LE(at + 8),
      method: zip.readUInt16LE(at + 10),
      compressedSize: zip.readUInt32LE(at + 20),
      size: zip.readUInt32LE(at + 24),
      local: zip.readUInt32LE(at + 42),
    };
    zip64Fields(entry, zip.subarray(at + 46 + nameLength, at + 46 + nameLength + extraLength));
    entries.push(entry);
    at = next;
  }
  return entries;
}

/** The end of central directory record: the last one, within its comment's reach of the end. */
function findEnd(zip: Buffer): number {
  for (let at = zip.length - 22; at >= Math.max(0, zip.length - 22 - 0xffff); at--) {
    if (zip.readUInt32LE(at) === END) return at;
  }
  throw new ZipRefusal('no ZIP central directory');
}

/** A size or offset saturated at 2^32-1 is in the ZIP64 extra field (id 1), in this order. */
function zip64Fields(entry: Entry, extra: Buffer): void {
  const fields = (['size', 'compressedSize', 'local'] as const).filter((k) => entry[k] === SATURATED);
  if (fields.length === 0) return;
  for (let at = 0; at + 4 <= extra.length; at += 4 + extra.readUInt16LE(at + 2)) {
    if (extra.readUInt16LE(at) !== 1) continue;
    fields.forEach((k, i) => {
      if (at + 4 + 8 * (i + 1) > extra.length) throw new ZipRefusal(`${entry.name}: its ZIP64 sizes are missing`);
      entry[k] = safeNumber(extra.readBigUInt64LE(at + 4 + 8 * i));
    });
    return;
  }
  throw new ZipRefusal(`${entry.name}: its ZIP64 sizes are missing`);
}

function safeNumber(n: bigint): number {
  if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw new ZipRefusal('a ZIP64 size beyond any file');
  return Number(n);
}

/** The parts as a ZIP of stored (uncompressed) entries, which any reader takes as they are. */
export function storedZip(parts: readonly ZipPart[]): Buffer {
  const chunks: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const part of parts) {
    const crc = crc32(part.data);
    const flags = part.utf8 ? 0x800 : 0;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(LOCAL, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(part.data.length, 18);
    local.writeUInt32LE(part.data.length, 22);
    local.writeUInt16LE(part.rawName.length, 26);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(CENTRAL, 0);
    entry.writeUInt16LE(20, 4);
    entry.writeUInt16LE(20, 6);
    entry.writeUInt16LE(flags, 8);
    entry.writeUInt32LE(crc, 16);
    entry.writeUInt32LE(part.data.length, 20);
    entry.writeUInt32LE(part.data.length, 24);
    entry.writeUInt16LE(part.rawName.length, 28);
    entry.writeUInt32LE(offset, 42);
    chunks.push(local, part.rawName, part.data);
    central.push(entry, part.rawName);
    offset += 30 + part.rawName.length + part.data.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(END, 0);
  end.writeUInt16LE(parts.length, 8);
  end.writeUInt16LE(parts.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...chunks, directory, end]);
}
