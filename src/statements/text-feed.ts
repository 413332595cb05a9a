import { textSlices } from './decode.js';
import { HEAD_CHARS, refuseBinary, statementReader, type DetectOptions } from './detect.js';
import type { SectionSink, StatementReader } from './types.js';

/**
 * A file's decoded text in, as it is read; its statements out through `sink`. The format's reader
 * is chosen once HEAD_CHARS characters have come (detect.ts), and the text is parsed a slice at a
 * time, `afterSlice` awaited after each (import.ts: a turn of the event loop, so Postgres's answers
 * are read within a slice's parse). Used on the import's main thread and in its reader thread
 * (read-thread.ts) alike.
 */
export interface TextFeed {
  write(text: string, last: boolean): Promise<void>;
}

export function createTextFeed(sink: SectionSink, options: Omit<DetectOptions, 'whole'>, sliceChars: number, afterSlice: () => Promise<unknown> | void): TextFeed {
  let reader: StatementReader | null = null;
  let start = '';
  return {
    async write(text, last) {
      if (!reader) {
        start += text;
        if (start.length < HEAD_CHARS && !last) return;
        reader = statementReader(start.slice(0, HEAD_CHARS), sink, { ...options, whole: last });
        text = start;
        start = '';
      }
      // A NUL anywhere in what was read refuses it before a slice of it is parsed, as a whole read would.
      refuseBinary(text);
      for (const slice of textSlices(text, sliceChars)) {
        reader.write(slice);
        await afterSlice();
      }
      if (last) reader.end();
    },
  };
}
