import type { Opt } from '@mikro-orm/core';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

/**
 * What is usual for one probe measuring one target: the running RTT to the target, the AS path
 * seen most recently and every ASN seen on the way. Anomaly scores compare a new trace with it.
 */
@Entity({ tableName: 'path_baseline' })
export class PathBaseline {
  /** `<source>:<probe>`, e.g. `atlas:53023`. */
  @PrimaryKey({ type: 'string', length: 80 })
  probeKey!: string;

  @PrimaryKey({ type: 'string', length: 45 })
  targetIp!: string;

  @Property({ type: 'integer' })
  samples!: number;

  /** Exponentially weighted mean RTT of the completed traces (ms); null until one completes. */
  @Property({ type: 'double', nullable: true, runtimeType: 'number' })
  rttMs?: number | null;

  /** The AS path of the latest trace, space separated (`17557 3356 1299`). */
  @Property({ type: 'text' })
  asPath!: string;

  /** Every ASN seen on this probe-target path, space separated. */
  @Property({ type: 'text' })
  knownAsns!: string;

  @Property({ type: 'datetime' })
  updatedAt: Opt<Date> = new Date();
}
