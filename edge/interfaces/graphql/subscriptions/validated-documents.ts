import { parse, specifiedRules, validate, type DocumentNode, type GraphQLError, type GraphQLSchema, type ValidationRule } from 'graphql';
import { refuse, withCode } from './socket-errors.js';

/** Validated documents kept per server (most recently used). */
const VALIDATED_DOCUMENTS = 500;

/**
 * Documents that parsed and passed every rule (graphql-js's and the abuse limits), by their text:
 * the schema and rules are fixed for this server, so the same text always gets the same verdict,
 * and a thousand clients subscribing with one document parse and validate it once. Refused
 * documents are not kept; they are checked again each time.
 */
export class ValidatedDocuments {
  private readonly documents = new Map<string, DocumentNode>();
  private readonly rules: ValidationRule[];

  constructor(
    private readonly schema: GraphQLSchema,
    validationRules: ValidationRule[],
    private readonly maxTokens: number,
  ) {
    this.rules = [...specifiedRules, ...validationRules];
  }

  /** The document of `query`, or the errors that refuse it (parse or validation). */
  document(query: string): DocumentNode | readonly GraphQLError[] {
    let document = this.documents.get(query);
    if (document) {
      // Most recently used last, so the oldest is the first to go.
      this.documents.delete(query);
      this.documents.set(query, document);
      return document;
    }
    try {
      document = parse(query, { maxTokens: this.maxTokens });
    } catch (error) {
      return refuse((error as Error).message, 'GRAPHQL_PARSE_FAILED', 'invalid_query');
    }
    const errors = validate(this.schema, document, this.rules);
    if (errors.length) return errors.map((error) => withCode(error, 'GRAPHQL_VALIDATION_FAILED'));
    if (this.documents.size >= VALIDATED_DOCUMENTS) this.documents.delete(this.documents.keys().next().value!);
    this.documents.set(query, document);
    return document;
  }
}
