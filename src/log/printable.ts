/**
 * Text from outside (a provider's error details, a bank file's values, an uploaded file's name) as
 * it may reach a person's terminal: every control and format character (ESC, BEL, the C1 controls,
 * bidi overrides, zero-width characters) written as a `\uXXXX` escape, so a terminal shows it
 * instead of acting on it (`ESC ] 0 ;` retitles the window, `ESC [ 2 J` clears the screen).
 * `keep` names the ones a caller prints as they are (a line feed between a message's lines).
 */
const UNPRINTABLE = /[\p{Cc}\p{Cf}]/gu;

export function printable(text: string, keep = ''): string {
  return text.replace(UNPRINTABLE, (c) => (keep.includes(c) ? c : `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`));
}

/** Whether text holds a character printable() would escape, or whitespace: a log field shown quoted. */
export const needsQuotes = (text: string): boolean => /[\s\p{Cc}\p{Cf}]/u.test(text);
