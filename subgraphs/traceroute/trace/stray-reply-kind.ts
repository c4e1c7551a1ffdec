import { registerEnumType } from '../../shared/type-graphql.js';

/** Answers a hop keeps apart from its probes' outcomes (RIPE Atlas `late`, `dup`, `edst`; a second scamper answer). */
export enum StrayReplyKind {
  late = 'late',
  duplicate = 'duplicate',
  other_destination = 'other_destination',
}

registerEnumType(StrayReplyKind, {
  name: 'StrayReplyKind',
  valuesConfig: {
    late: { description: 'The answer to an earlier probe (RIPE `late`), perhaps from the previous hop; it has no RTT.' },
    duplicate: { description: 'A second answer to one probe (RIPE `dup`).' },
    other_destination: { description: 'The packet that drew it was addressed elsewhere than the target (RIPE `edst`).' },
  },
});
