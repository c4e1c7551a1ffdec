import { Directive, Field, ObjectType } from '../../shared/type-graphql.js';

/**
 * A document of a tender as the marketplace hands it out: only the grant to read it (see
 * tender-document-grant.ts); the membership subgraph, which keeps the document, resolves the rest.
 */
@ObjectType('TenderDocument', { description: "A tender's document, readable by the buyer and by the vendors who may bid." })
@Directive('@key(fields: "grant", resolvable: false)')
export class TenderDocumentType {
  /** Part of the key only: @inaccessible keeps it out of the API schema, so only the gateway carries it. */
  @Field(() => String)
  @Directive('@inaccessible')
  grant!: string;
}
