/** One SWIFT field: ':61:' -> tag '61', its value with continuation lines joined by '\n'. */
export interface Field {
  tag: string;
  value: string;
}

export interface Message {
  fields: Field[];
  /** the sending bank's BIC (8 characters) when the envelope or a header line names it */
  bic: string | null;
}

// Header lines naming the bank: 'ABNANL2A' (ABN AMRO), '0000 01INGBNL2AXXXX00001' (ING).
const SENDER = /^(?:\d{4} \d{2})?([A-Z]{4}NL[A-Z0-9]{2})(?:[A-Z0-9]{3,4})?(?:\d{5})?$/;

// Fields that may run over several lines: :61: (its second line is the supplementary details) and
// :86:. Every other field is one line, so a stray line after it (a bank's header line for the next
// message, a trailer) is not glued onto it.
const MULTI_LINE = new Set(['61', '86']);
// A statement number cut after its fifth character by a Dutch bank's export (':28C:0000' then '0'):
// a line of digits (and the '/' before a page number) after :28C: continues it.
const NUMBER_TAGS = new Set(['28C', '28']);
const NUMBER_CONTINUED = /^[0-9/]{1,10}$/;
const TAG = /^:(\d{2}[A-Z]?):(.*)$/;
// {1:F01BANKDEFFAXXX0000000000}, {2:O940...}, {3:{108:REF}}, {5:{CHK:...}}, {S:...}: blocks around the text block.
const BLOCK = /^\{[1235S]:(?:[^{}]|\{[^{}]*\})*\}/;

/**
 * The messages of an MT940 file, each a list of fields. Banks wrap and separate messages in many
 * ways, all handled here:
 *  - the SWIFT block structure: {1:...}{2:...}{3:...}{4: <text block> -}{5:...}, several messages
 *    on one line or on separate lines;
 *  - bank header lines before the first field: ABN AMRO 'ABNANL2A' and '940', ING
 *    '0000 01INGBNL2AXXXX00001', Rabobank ':940:' (three digits: not a field tag);
 *  - a line '-' ending a message (also at the very start of some exports);
 *  - SOH (0x01), ETX (0x03) and the DOS end-of-file byte (0x1A) between messages.
 *  - a :28C: statement number continued on the next line;
 * A message starts with :20: (or with the first field after a separator, for exports without :20:);
 * a line outside a message, or after a one-line field, is not a field and is skipped.
 */
export function mt940MessageReader(onMessage: (message: Message) => void): { write(text: string): void; end(): void } {
  let current: Field[] | null = null;
  let bic: string | null = null;
  let partial = '';
  const end = (): void => {
    if (current && current.length > 0) onMessage({ fields: current, bic });
    current = null;
  };
  const line = (raw: string): void => {
    let line = raw;
    // Envelope tokens at the start of a line, possibly several ('-}{5:{CHK:123}}{1:F01...}{2:...}{4:').
    for (;;) {
      const block = BLOCK.exec(line);
      if (block) {
        if (line.startsWith('{1:')) {
          end();
          bic = /^\{1:F\d{2}([A-Z]{6}[A-Z0-9]{2})/.exec(line)?.[1] ?? bic;
        }
        line = line.slice(block[0].length);
      } else if (line.startsWith('{4:')) {
        end();
        current = [];
        line = line.slice(3);
      } else if (line.startsWith('-}')) {
        end();
        line = line.slice(2);
      } else break;
    }
    if (line.trim() === '') return;
    if (line.trim() === '-') {
      end();
      return;
    }
    const m = TAG.exec(line);
    if (m) {
      const tag = m[1]!;
      if (tag === '20' && current && current.length > 0) end();
      current ??= [];
      current.push({ tag, value: m[2] ?? '' });
      return;
    }
    const last = current?.[current.length - 1];
    if (last && MULTI_LINE.has(last.tag.slice(0, 2))) last.value += `\n${line}`;
    else if (last && NUMBER_TAGS.has(last.tag) && NUMBER_CONTINUED.test(line.trim())) last.value = last.value.trim() + line.trim();
    else if (!current) bic = SENDER.exec(line.trim())?.[1] ?? bic;
  };
  return {
    write(text) {
      // SOH, ETX and the DOS end-of-file byte end a message; a '\r' that ends a chunk is a line end
      // (the '\n' that may follow in the next chunk then makes an empty line, which is skipped).
      const lines = (partial + text.replace(/[\x01\x03\x1a]/g, '\n-\n')).split(/\r\n|\r|\n/);
      partial = lines.pop() ?? '';
      for (const l of lines) line(l);
    },
    end() {
      if (partial !== '') line(partial);
      partial = '';
      end();
    },
  };
}
