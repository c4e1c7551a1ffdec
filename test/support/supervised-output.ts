/** A supervised platform's JSON log line, as the supervisor and the edge's primary write them. */
export interface SupervisorLogLine {
  msg?: string;
  pid?: number;
  req?: { url?: string };
  service?: string;
  childPid?: number;
  exitCode?: number | null;
  signal?: string | null;
}

/** The JSON log lines of `output` (a supervised platform's combined stdout and stderr). */
export function logLinesOf(output: string): SupervisorLogLine[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .flatMap((line) => {
      // Several processes share the output: a long line may be split by another's write.
      try {
        return [JSON.parse(line) as SupervisorLogLine];
      } catch {
        return [];
      }
    });
}

/** Every process id the supervisor and the edge's primary started, by service name (latest last). */
export function startedPidsOf(output: string): Map<string, number[]> {
  const pids = new Map<string, number[]>();
  for (const line of logLinesOf(output)) {
    if (line.msg === `${line.service} started` && line.childPid) pids.set(line.service!, [...(pids.get(line.service!) ?? []), line.childPid]);
  }
  return pids;
}

/** Whether a process of that id exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
