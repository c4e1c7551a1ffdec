import { Field, ID, ObjectType } from '../../shared/type-graphql.js';

/** A trace's measurement record as it was imported: nothing of the source is lost to the summary. */
@ObjectType('TraceRecord', { description: "A trace's measurement record exactly as it was imported." })
export class TraceRecordType {
  @Field(() => ID)
  traceId!: string;

  @Field(() => String, { description: 'The format of record: ripe_atlas (a RIPE Atlas result) or scamper (a scamper2 JSON trace).' })
  source!: string;

  @Field(() => String, { description: 'The JSON text of the record byte for byte as the imported file had it: its line, or its element of an array.' })
  record!: string;
}
