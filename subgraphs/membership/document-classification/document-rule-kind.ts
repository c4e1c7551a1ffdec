import { registerEnumType } from '../../shared/type-graphql.js';

/** How a category's rule matches a document's text (Paperless-ngx's matching algorithms). */
export enum DocumentRuleKind {
  ANY = 'any',
  ALL = 'all',
  EXACT = 'exact',
  REGEX = 'regex',
  FUZZY = 'fuzzy',
}

registerEnumType(DocumentRuleKind, {
  name: 'DocumentRuleKind',
  description: 'ANY: one of the words; ALL: every word; EXACT: the phrase; REGEX: a bounded regular expression; FUZZY: a phrase within a similarity threshold.',
  valuesConfig: {
    ANY: { description: 'Any of the whitespace-separated words appears as a whole word.' },
    ALL: { description: 'Every whitespace-separated word appears as a whole word, in any order.' },
    EXACT: { description: 'The phrase appears as written (whitespace runs are equal).' },
    REGEX: { description: 'The JavaScript regular expression matches (at most 200 characters, no nested quantifiers or back-references).' },
    FUZZY: { description: 'A run of as many words as the phrase is at least `threshold` similar to it (Levenshtein).' },
  },
});
