/**
 * A command's result that is also a failure (an import that stored nothing of a file): the CLI
 * prints `result` as it prints any result, then `message` as its error, and exits 1.
 */
export class IncompleteResult {
  constructor(
    readonly result: unknown,
    readonly message: string,
  ) {}
}
