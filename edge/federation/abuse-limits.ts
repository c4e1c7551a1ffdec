import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import { GraphQLError, type ASTVisitor, type ParseOptions, type ValidationContext, type ValidationRule } from 'graphql';
import { DEFAULT_JSON_MAX_DEPTH, tooDeepMessage } from '../../core/json-depth.js';

/** What the edge accepts in one GraphQL document before it plans or runs anything. */
export interface AbuseLimits {
  /** Deepest selection nesting; each fragment, inline or spread, counts as a level. */
  maxDepth: number;
  /** GraphQL Armor's static cost (objects 2, scalars 1, times 1.5 per level, times `first`/`last`). */
  maxCost: number;
  /** Aliased fields per operation (`__typename` is free). */
  maxAliases: number;
  /** Lexical tokens in the whole document, checked while parsing. */
  maxTokens: number;
  /** Directive uses per operation. */
  maxDirectives: number;
  /** Deepest nesting of list and object values written in the document (JSON_MAX_DEPTH, as for variables). */
  maxValueDepth: number;
  /** Hides "Did you mean ...?" hints, which spell out the schema; on whenever introspection is off. */
  blockFieldSuggestions: boolean;
}

/** The `extensions.reason` of each refusal; `extensions.code` is always GRAPHQL_VALIDATION_FAILED. */
export type AbuseReason = 'max_depth' | 'max_cost' | 'max_aliases' | 'max_tokens' | 'max_directives' | 'max_value_depth' | 'introspection_disabled';

export const DEFAULT_ABUSE_LIMITS: AbuseLimits = {
  // Armor's 6: the deepest real path is 4 (jobPostings.data.postedBy.name); events and chat will nest one or two more.
  maxDepth: 6,
  // Stricter than Armor's 5000: all nine root queries with every field cost about 250 together, the largest 63.
  maxCost: 1000,
  // Armor's 15: each alias is another resolver call and subgraph fetch, but dashboards alias a few filtered lists.
  maxAliases: 15,
  // Armor's 1000: a full introspection query is 184 tokens, our largest operation 66; codegen'd client queries run longer.
  maxTokens: 1000,
  // Armor's 50: only @include and @skip exist, each at most once per field, so tokens and cost bound them already.
  maxDirectives: 50,
  // The same bound as JSON in variables and bodies: a value written in the document is no different.
  maxValueDepth: DEFAULT_JSON_MAX_DEPTH,
  // Armor's default; the edge turns it off only when introspection already shows the schema.
  blockFieldSuggestions: true,
};

export interface ArmorOptions {
  plugins: ApolloServerPlugin<BaseContext>[];
  validationRules: ValidationRule[];
  parseOptions: ParseOptions;
  /** A batch would run each of its operations under the limits, and so multiply them. */
  allowBatchedHttpRequests: false;
}

const CODE = 'GRAPHQL_VALIDATION_FAILED';
// graphql-js 16 words it "more that"; later versions may fix the typo.
const TOKEN_LIMIT = /^Syntax Error: Document contains more tha[nt] \d+ tokens/;
const INTROSPECTION_OFF = /^GraphQL introspection is not allowed/;
// Covers fields, arguments, types, directives ("Did you mean "x"?") and enum values ("Did you mean the enum value "X"?").
const SUGGESTION = /\s*Did you mean [^?]*\?/g;

// Armor reports each refusal here instead of throwing, so that Apollo answers 400 with our reason.
function reject(reason: AbuseReason) {
  return (context: ValidationContext | null, error: GraphQLError): void => {
    context?.reportError(
      new GraphQLError(error.message.replace(/^Syntax Error: /, ''), { extensions: { code: CODE, reason } }),
    );
  };
}

// Names the refusals that Apollo raises itself, and drops schema hints from every error. It runs
// before `formatError`, which keeps `code` and `reason`.
function abuseErrorsPlugin(limits: AbuseLimits): ApolloServerPlugin<BaseContext> {
  return {
    async requestDidStart() {
      return {
        async didEncounterErrors({ errors }) {
          for (const error of errors) {
            if (TOKEN_LIMIT.test(error.message)) {
              // Apollo calls it GRAPHQL_PARSE_FAILED, but the document is well formed: it is only too long.
              error.message = `Query token limit of ${limits.maxTokens} exceeded.`;
              error.extensions.code = CODE;
              error.extensions.reason = 'max_tokens' satisfies AbuseReason;
            } else if (INTROSPECTION_OFF.test(error.message)) {
              error.extensions.reason = 'introspection_disabled' satisfies AbuseReason;
            }
            if (limits.blockFieldSuggestions) error.message = error.message.replace(SUGGESTION, '');
          }
        },
      };
    },
  };
}

/**
 * List and object values written in the document nest at most `limit` deep, as JSON variables do.
 * The token limit already keeps the parser's and validator's recursion shallow; this keeps a
 * literal from carrying what a variable may not.
 */
function maxValueDepthRule(limit: number): ValidationRule {
  return (context: ValidationContext): ASTVisitor => {
    let depth = 0;
    let reported = false;
    const enter = () => {
      depth += 1;
      if (depth > limit && !reported) {
        reported = true;
        context.reportError(new GraphQLError(tooDeepMessage(limit), { extensions: { code: CODE, reason: 'max_value_depth' satisfies AbuseReason } }));
      }
    };
    const leave = () => {
      depth -= 1;
    };
    return { ListValue: { enter, leave }, ObjectValue: { enter, leave } };
  };
}

/**
 * GraphQL Armor's limits for the edge's Apollo server: spread into its options, next to its own
 * plugins. Every refusal is a 400 with `extensions.code` GRAPHQL_VALIDATION_FAILED and a `reason`.
 */
export function graphqlArmor(limits: AbuseLimits): ArmorOptions {
  const rule = (n: number, reason: AbuseReason) => ({ n, propagateOnRejection: false, onReject: [reject(reason)] });
  const armor = new ApolloArmor({
    maxDepth: rule(limits.maxDepth, 'max_depth'),
    costLimit: { maxCost: limits.maxCost, propagateOnRejection: false, onReject: [reject('max_cost')] },
    maxAliases: rule(limits.maxAliases, 'max_aliases'),
    maxDirectives: rule(limits.maxDirectives, 'max_directives'),
    // Armor's token plugin throws from parsingDidStart, which Apollo answers with a 500; graphql-js
    // counts the same tokens while parsing and fails as a syntax error, which Apollo answers with a 400.
    maxTokens: { enabled: false },
    // Armor's Apollo version leaves a stray "?" and misses enum value hints; abuseErrorsPlugin does it.
    blockFieldSuggestion: { enabled: false },
  });
  const { plugins, validationRules } = armor.protect();
  return {
    // Armor's declarations resolve @apollo/server's CommonJS types, ours its ESM ones: same objects.
    plugins: [...(plugins as unknown as ApolloServerPlugin<BaseContext>[]), abuseErrorsPlugin(limits)],
    validationRules: [...validationRules, maxValueDepthRule(limits.maxValueDepth)],
    parseOptions: { maxTokens: limits.maxTokens },
    allowBatchedHttpRequests: false,
  };
}
