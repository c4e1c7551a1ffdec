/** See file-lock.mjs: an exclusive lock between this machine's processes, taken over when its holder died. */
export declare function withFileLock<T>(
  lockDir: string,
  fn: () => Promise<T> | T,
  options?: { staleMs?: number; pollMs?: number; onWait?: () => void; onTakeOver?: (reason: string) => void },
): Promise<T>;
