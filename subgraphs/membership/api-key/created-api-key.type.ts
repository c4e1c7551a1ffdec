import { Field, ObjectType } from '../../shared/type-graphql.js';
import { ApiKeyType } from './api-key.type.js';

/** A key just issued: the only time its secret is ever shown. */
@ObjectType('CreatedApiKey')
export class CreatedApiKeyType extends ApiKeyType {
  @Field(() => String, { description: 'Shown once; only its hash is stored.' })
  secret!: string;
}
