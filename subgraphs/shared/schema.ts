import { buildSubgraphSchema } from '@apollo/subgraph';
import { printSchemaWithDirectives } from '@graphql-tools/utils';
import { isObjectType, parse, type GraphQLSchema } from 'graphql';
import { buildSchema, createResolversMap, type BuildSchemaOptions } from './type-graphql.js';
import { authChecker } from './authorization.js';
import { rejectNulInArguments } from './reject-nul.js';
import { validateArguments } from './validation.js';

/** Federation 2 link every subgraph declares; 2.5 is within what the pinned gateway supports. */
const FEDERATION_LINK = `
  extend schema @link(
    url: "https://specs.apollo.dev/federation/v2.5"
    import: ["@key", "@shareable", "@external", "@requires", "@provides", "@inaccessible"]
  )
`;

/**
 * type-graphql insists on a PubSub when a schema has subscriptions, and keeps it in a
 * process-wide static. Ours subscribe through the request context's pubsub (`subscribe` option),
 * so each subgraph instance uses its own bus; this one only refuses to be used.
 */
const CONTEXT_PUBSUB_ONLY = {
  publish: () => {
    throw new Error('Publish through the request context (ctx.pubsub), not type-graphql');
  },
  subscribe: () => {
    throw new Error('Subscribe with the `subscribe` option and ctx.pubsub, not type-graphql topics');
  },
};

/**
 * Builds a type-graphql schema and turns it into an Apollo subgraph schema: type-graphql's
 * resolvers are kept, and the entity reference resolvers are merged in.
 */
export async function buildFederatedSchema(
  options: Omit<BuildSchemaOptions, 'skipCheck'>,
  referenceResolvers: Record<string, { __resolveReference: (...args: never[]) => unknown }> = {},
): Promise<GraphQLSchema> {
  const schema = rejectNulInArguments(
    await buildSchema({
      validateFn: validateArguments,
      authChecker,
      pubSub: CONTEXT_PUBSUB_ONLY,
      ...options,
      skipCheck: true,
    }),
  );
  const resolvers = createResolversMap(schema) as Record<string, Record<string, unknown>>;
  for (const [typeName, reference] of Object.entries(referenceResolvers)) {
    resolvers[typeName] = { ...resolvers[typeName], ...reference };
  }
  const federated = buildSubgraphSchema({
    typeDefs: parse(FEDERATION_LINK + printSchemaWithDirectives(schema)),
    // @apollo/subgraph does not export its resolver-map type; the map above has its shape.
    resolvers: resolvers as never,
  });
  return withFieldExtensions(federated, schema);
}

/**
 * Field extensions (type-graphql's @Extensions) do not survive the SDL the federated schema is
 * built from: they are carried over from the type-graphql schema, field by field.
 */
function withFieldExtensions(target: GraphQLSchema, source: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(source.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    const into = target.getType(type.name);
    if (!isObjectType(into)) continue;
    for (const field of Object.values(type.getFields())) {
      const extensions = field.extensions;
      const found = into.getFields()[field.name];
      if (found && extensions && Object.keys(extensions).length) found.extensions = { ...found.extensions, ...extensions };
    }
  }
  return target;
}
