import { Field, Int, ObjectType } from '../../shared/type-graphql.js';

@ObjectType('SkippedRecord')
export class SkippedRecordType {
  @Field(() => String, { description: 'Where in the input: "line 7", "record 3", "line 2 record 5".' })
  position!: string;

  @Field(() => String)
  reason!: string;
}

@ObjectType('TraceImportReport')
export class TraceImportReportType {
  @Field(() => Int, { description: 'Records read: the traceroutes and the records skipped (scamper\'s metadata and cycle lines are no records).' })
  read!: number;

  @Field(() => Int)
  stored!: number;

  @Field(() => Int, { description: 'Traceroutes stored before (same measurement, probe and time).' })
  duplicates!: number;

  @Field(() => [SkippedRecordType])
  skipped!: SkippedRecordType[];
}
