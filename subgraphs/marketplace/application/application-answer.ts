import { Length } from 'class-validator';
import { Field, InputType, ObjectType } from '../../shared/type-graphql.js';

/** A question of the posting and the candidate's answer. */
@ObjectType('ApplicationAnswer')
@InputType('ApplicationAnswerInput')
export class ApplicationAnswer {
  @Field(() => String)
  @Length(1, 500)
  question!: string;

  @Field(() => String)
  @Length(0, 5000)
  answer!: string;
}
