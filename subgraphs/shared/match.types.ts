import { Directive, Field, Float, Int, ObjectType } from './type-graphql.js';

/** The points each part of a job match gave; both the marketplace and membership answer it. */
@ObjectType({ description: 'Points out of 100 a match got for skills (0-60), text relevance (0-30) and location (0-10).' })
@Directive('@shareable')
export class MatchComponentsType {
  @Field(() => Float)
  skills!: number;

  @Field(() => Float)
  text!: number;

  @Field(() => Float)
  location!: number;
}

/** A job match's score and why: the fields every match result carries. */
@ObjectType({ description: 'An explained match score.' })
@Directive('@shareable')
export class MatchExplanationType {
  @Field(() => Int, { description: '0-100.' })
  score!: number;

  @Field(() => MatchComponentsType)
  components!: MatchComponentsType;

  @Field(() => [String], { description: "The posting's skills the candidate has." })
  matchedSkills!: string[];

  @Field(() => [String], { description: "The posting's skills the candidate lacks." })
  missingSkills!: string[];

  @Field(() => [String], { description: 'The score in words.' })
  reasons!: string[];
}

/** An offset cursor for ranked lists (a rank has no stable key to seek from). */
export function encodeRankCursor(offset: number): string {
  return Buffer.from(JSON.stringify({ o: offset })).toString('base64url');
}

/** The offset of a rank cursor; null when it is not one. */
export function decodeRankCursor(cursor: string): number | null {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { o?: unknown };
    return Number.isInteger(parsed.o) && (parsed.o as number) >= 0 && (parsed.o as number) <= 100_000 ? (parsed.o as number) : null;
  } catch {
    return null;
  }
}
