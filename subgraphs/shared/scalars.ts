import { GraphQLError, GraphQLScalarType } from 'graphql';
import { DateTimeResolver as IsoDateTime, LocalDateResolver as IsoLocalDate } from 'graphql-scalars';

/**
 * graphql-scalars' LocalDate and DateTime accept year 0000 (and DateTime years past 9999 once an
 * offset is applied), which PostgreSQL refuses mid-statement and JavaScript date arithmetic turns
 * into malformed text: an input that passed coercion then failed as a 500. These are the same
 * scalars (same names, descriptions and serialisation, so the schema does not change), refusing
 * at coercion any date outside 0001-01-01 to 9999-12-31 UTC, which every store and format the
 * platform speaks can carry. Domain rules narrow that further where they need to.
 */
function withinStorableYears(base: GraphQLScalarType, yearOf: (parsed: unknown) => number): GraphQLScalarType {
  const check = <T>(parsed: T): T => {
    const year = yearOf(parsed);
    if (!(year >= 1 && year <= 9999)) throw new GraphQLError(`${base.name} must lie between 0001-01-01 and 9999-12-31`);
    return parsed;
  };
  const config = base.toConfig();
  return new GraphQLScalarType({
    ...config,
    parseValue: (value) => check(config.parseValue!(value)),
    parseLiteral: (ast, variables) => check(config.parseLiteral!(ast, variables)),
  });
}

/**
 * graphql-scalars checks every LocalDate it serialises by building a Date and printing it back:
 * 3% of a page of members' CPU (four dates a row). The dates of one page are mostly the same few
 * days, so the strings it has passed are remembered (up to 4,096, then forgotten at once) and
 * pass again without the check. Anything else goes through the library's check as before.
 */
function rememberingSerialized(base: GraphQLScalarType): GraphQLScalarType {
  const passed = new Set<string>();
  const serialize = base.serialize.bind(base);
  const config = base.toConfig();
  return new GraphQLScalarType({
    ...config,
    serialize: (value) => {
      if (typeof value === 'string' && passed.has(value)) return value;
      const serialized = serialize(value);
      if (typeof value === 'string') {
        if (passed.size >= 4096) passed.clear();
        passed.add(value);
      }
      return serialized;
    },
  });
}

/** A calendar date, YYYY-MM-DD, years 0001 to 9999. */
export const LocalDateResolver = rememberingSerialized(withinStorableYears(IsoLocalDate, (parsed) => Number(String(parsed).slice(0, 4))));

/** An instant, RFC 3339 with an offset, years 0001 to 9999 in UTC. */
export const DateTimeResolver = withinStorableYears(IsoDateTime, (parsed) => (parsed instanceof Date ? parsed.getUTCFullYear() : Number.NaN));
