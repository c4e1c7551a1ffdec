import { Supergraph } from '@apollo/federation-internals';
import {
  getNamedType,
  isCompositeType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLInputField,
  type GraphQLInputType,
  type GraphQLSchema,
} from 'graphql';
import type { KeyKind } from '../../core/principal.js';
import { readSupergraph } from '../../schema/supergraph.js';
import type { SubgraphParts } from '../../subgraphs/shared/subgraph.js';

/** One public mutation, called with arguments of the right types (values need not make sense). */
export interface MutationCall {
  /** The subgraph that resolves it (its SubgraphParts name). */
  subgraph: string;
  field: string;
  query: string;
  variables: Record<string, unknown>;
}

/** A value of each scalar the graph declares; a new scalar must be added here, or calls refuse to build. */
const SCALAR_SAMPLES: Record<string, unknown> = {
  String: 'x',
  ID: '00000000-0000-4000-8000-000000000000',
  Int: 1,
  Float: 1,
  Boolean: false,
  SafeInt: 1,
  DateTime: '2030-01-01T00:00:00.000Z',
  LocalDate: '2030-01-01',
  JSONObject: {},
};

/** Only what must be given: non-null and without a default. */
function required(input: GraphQLArgument | GraphQLInputField): boolean {
  return isNonNullType(input.type) && input.defaultValue === undefined;
}

function sample(type: GraphQLInputType): unknown {
  if (isNonNullType(type)) return sample(type.ofType);
  if (isListType(type)) return [];
  if (isEnumType(type)) return type.getValues()[0].name;
  if (isInputObjectType(type)) {
    const fields = Object.values(type.getFields());
    if (type.isOneOf) return { [fields[0].name]: sample(fields[0].type) };
    return Object.fromEntries(fields.filter(required).map((field) => [field.name, sample(field.type)]));
  }
  if (isScalarType(type) && type.name in SCALAR_SAMPLES) return SCALAR_SAMPLES[type.name];
  throw new Error(`No sample value for the input type ${String(type)}: add one to SCALAR_SAMPLES`);
}

/** Every mutation of `schema`, each with its required arguments as variables. */
export function mutationCallsOf(schema: GraphQLSchema): Omit<MutationCall, 'subgraph'>[] {
  return Object.values(schema.getMutationType()?.getFields() ?? {}).map((field) => {
    const args = field.args.filter(required);
    const declared = args.map((arg) => `$${arg.name}: ${String(arg.type)}`).join(', ');
    const passed = args.map((arg) => `${arg.name}: $${arg.name}`).join(', ');
    const selection = isCompositeType(getNamedType(field.type)) ? ' { __typename }' : '';
    return {
      field: field.name,
      query: `mutation${declared ? `(${declared})` : ''} { ${field.name}${passed ? `(${passed})` : ''}${selection} }`,
      variables: Object.fromEntries(args.map((arg) => [arg.name, sample(arg.type)])),
    };
  });
}

/**
 * Every mutation of the public (API) schema of the committed supergraph, with the subgraph that
 * resolves it: a mutation added to any subgraph is in this list once composed.
 */
export function publicMutationCalls(): MutationCall[] {
  const supergraph = Supergraph.build(readSupergraph());
  const owner = new Map<string, string>();
  for (const subgraph of supergraph.subgraphs().values()) {
    for (const field of subgraph.schema.schemaDefinition.rootType('mutation')?.fields() ?? []) owner.set(field.name, subgraph.name);
  }
  return mutationCallsOf(supergraph.apiSchema().toGraphQLJSSchema()).map((call) => ({ ...call, subgraph: owner.get(call.field)! }));
}

/** The kinds a dashboard session may act as (x-dashboard-kind; admin for platform admins). */
const SESSION_KINDS: readonly KeyKind[] = ['live', 'test', 'admin'];

/** A session kind that `part` serves `field` to, so that a call reaches the field's resolver; live when none. */
export function sessionKindFor(part: SubgraphParts, field: string): KeyKind {
  const kinds = part.kindsByField?.[`Mutation.${field}`] ?? part.servesKinds;
  return kinds.find((kind) => SESSION_KINDS.includes(kind)) ?? 'live';
}
