/** What a supervised process tells its parent over the IPC channel. */
export interface ReadyMessage {
  type: 'ready';
  /** Where the service answers, as it would print it. */
  url: string;
}

export function isReadyMessage(message: unknown): message is ReadyMessage {
  return typeof message === 'object' && message !== null && (message as ReadyMessage).type === 'ready' && typeof (message as ReadyMessage).url === 'string';
}

/** Tells the parent (the supervisor, or the edge's primary) that this process serves at `url`. */
export function reportReady(url: string): void {
  process.send?.({ type: 'ready', url } satisfies ReadyMessage);
}

/**
 * Stops this process when its parent goes away, however it went (even SIGKILL): the IPC channel
 * closes, and a service left without its supervisor would hold its port with nobody to stop it.
 */
export function stopWithParent(): void {
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
}

/** The file next to the caller's module, with the caller's own extension: `.ts` under tsx, `.js` from dist. */
export function siblingEntry(moduleUrl: string, name: string): string {
  const extension = moduleUrl.endsWith('.ts') ? '.ts' : '.js';
  return new URL(`./${name}${extension}`, moduleUrl).pathname;
}
