/** Bad command-line usage: exit status 2, with the message shown to the user. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
