import { buildOperationNodeForField } from '@graphql-tools/utils';
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  isSpecifiedScalarType,
  isUnionType,
  GraphQLNonNull,
  Kind,
  OperationTypeNode,
  typeFromAST,
  type GraphQLArgument,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { resolvers as knownScalars } from 'graphql-scalars';
import type { BridgeRoute, BridgeRoutes } from './bridge-routes.js';

/** A JSON Schema object as OpenAPI 3.0 writes it (with `nullable`). */
export type SchemaObject = Record<string, unknown>;
export type OpenApiDocument = {
  openapi: string;
  info: { title: string; version: string; description?: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, OperationObject>>;
  tags?: { name: string; description: string }[];
  components: { schemas: Record<string, SchemaObject>; securitySchemes?: Record<string, unknown> };
  security?: Record<string, string[]>[];
};
export type OperationObject = Record<string, unknown> & {
  parameters?: Record<string, unknown>[];
  responses: Record<string, { description: string; content?: Record<string, { schema: SchemaObject }> }>;
};

/** What a specification adds to the generated document: its key scheme, error body and hand-written paths. */
export interface OpenApiExtras {
  securitySchemes: Record<string, unknown>;
  /** The specification's error body, served as `components.schemas.Error` and every operation's `default` response. */
  errorSchema: SchemaObject;
  /** Changes to the generated document for routes served by hand (streams, other content types). */
  extend?(document: OpenApiDocument): void;
  /** The areas operations are grouped in (OpenAPI tags), in the order readers see them, each with the path prefixes it holds. */
  areas?: readonly { name: string; description: string; prefixes: readonly string[] }[];
}

export interface OpenApiOptions {
  title: string;
  description: string;
  basePath: string;
  schema: GraphQLSchema;
  routes: BridgeRoutes;
  /** The operation sofa runs for each `Type.field` of `routes`: responses are described from its selections. */
  operations: Map<string, OperationDefinitionNode>;
  extras?: OpenApiExtras;
}

const BUILT_IN_SCALARS: Record<string, SchemaObject> = {
  Int: { type: 'integer', format: 'int32' },
  Float: { type: 'number', format: 'double' },
  String: { type: 'string' },
  Boolean: { type: 'boolean' },
  ID: { type: 'string' },
};

// graphql-scalars' own JSON Schemas, where a format says more to code generators than a pattern.
const SCALAR_OVERRIDES: Record<string, SchemaObject> = {
  LocalDate: { type: 'string', format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
  JSON: { description: 'Any JSON value.' },
};

/**
 * The JSON Schema of every custom scalar of `schema`, from graphql-scalars' definitions by name.
 * A scalar graphql-scalars does not know is described as any JSON value, so it never leaves a
 * dangling reference.
 */
export function customScalarSchemas(schema: GraphQLSchema): Record<string, SchemaObject> {
  const scalars: Record<string, SchemaObject> = {};
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isScalarType(type) || isSpecifiedScalarType(type) || type.name.startsWith('__')) continue;
    const known = (knownScalars as Record<string, { extensions?: { jsonSchema?: SchemaObject } }>)[type.name]?.extensions?.jsonSchema;
    const { title: _title, ...described } = SCALAR_OVERRIDES[type.name] ?? known ?? {};
    scalars[type.name] = { ...described, ...(type.description && !described.description ? { description: type.description } : {}) };
  }
  return scalars;
}

/** The operation sofa builds for `Type.field`, with the same settings, so responses are described from what runs. */
export function sofaOperation(
  schema: GraphQLSchema,
  graphqlPath: string,
  settings: { models: string[]; ignore: string[]; depthLimit: number },
): OperationDefinitionNode {
  const [typeName, field] = graphqlPath.split('.');
  return buildOperationNodeForField({
    schema,
    kind: typeName === 'Query' ? OperationTypeNode.QUERY : OperationTypeNode.MUTATION,
    field,
    models: settings.models,
    ignore: settings.ignore,
    circularReferenceDepth: settings.depthLimit,
  });
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** `schema`, or null too. A `$ref` cannot take siblings in OpenAPI 3.0, so it is wrapped. */
function orNull(schema: SchemaObject): SchemaObject {
  return '$ref' in schema ? { nullable: true, allOf: [schema] } : { ...schema, nullable: true };
}

function withDescription(schema: SchemaObject, description: string | null | undefined): SchemaObject {
  if (!description) return schema;
  return '$ref' in schema ? { allOf: [schema], description } : { ...schema, description };
}

function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${stableStringify((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Builds the components as the document's operations reference them. */
class Components {
  readonly schemas: Record<string, SchemaObject> = {};
  private readonly shapes = new Map<string, string>();

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly scalars: Record<string, SchemaObject>,
  ) {
    for (const [name, scalar] of Object.entries(scalars)) this.schemas[name] = scalar;
  }

  /** A named type that needs no selection: a scalar inline, an enum by reference. */
  private leaf(type: GraphQLNamedType): SchemaObject {
    if (isScalarType(type)) {
      // Inline, without the scalar's own description: that one is on its component.
      const { description: _description, ...scalar } = BUILT_IN_SCALARS[type.name] ?? this.scalars[type.name] ?? {};
      return scalar;
    }
    if (isEnumType(type)) {
      this.schemas[type.name] ??= {
        type: 'string',
        enum: type.getValues().map((value) => value.name),
        ...(type.description ? { description: type.description } : {}),
      };
      return ref(type.name);
    }
    throw new Error(`${type.name} is not a leaf type`);
  }

  /** The schema of an input type (arguments, request bodies). */
  input(type: GraphQLInputType): SchemaObject {
    if (isNonNullType(type)) return this.inputNonNull(type.ofType);
    return orNull(this.inputNonNull(type));
  }

  private inputNonNull(type: GraphQLInputType): SchemaObject {
    if (isListType(type)) return { type: 'array', items: this.input(type.ofType) };
    if (isInputObjectType(type)) {
      if (!this.schemas[type.name]) {
        this.schemas[type.name] = {};
        const fields = Object.values(type.getFields());
        const required = fields.filter((f) => isNonNullType(f.type) && f.defaultValue === undefined).map((f) => f.name);
        this.schemas[type.name] = {
          type: 'object',
          properties: Object.fromEntries(fields.map((f) => [f.name, withDescription(this.input(f.type), f.description)])),
          ...(required.length ? { required } : {}),
          ...(type.description ? { description: type.description } : {}),
        };
      }
      return ref(type.name);
    }
    return this.leaf(type as GraphQLNamedType);
  }

  /** The schema of a selection's value: exactly the fields the REST response carries. */
  output(type: GraphQLOutputType, selectionSet: SelectionSetNode | undefined): SchemaObject {
    if (isNonNullType(type)) return this.outputNonNull(type.ofType, selectionSet);
    return orNull(this.outputNonNull(type, selectionSet));
  }

  private outputNonNull(type: GraphQLOutputType, selectionSet: SelectionSetNode | undefined): SchemaObject {
    if (isListType(type)) return { type: 'array', items: this.output(type.ofType, selectionSet) };
    if (isObjectType(type)) return this.named(type.name, this.objectShape(type.name, selectionSet));
    if (isUnionType(type) || isInterfaceType(type)) {
      const members = (selectionSet?.selections ?? []).flatMap((selection) =>
        selection.kind === Kind.INLINE_FRAGMENT && selection.typeCondition
          ? [this.named(selection.typeCondition.name.value, this.objectShape(selection.typeCondition.name.value, selection.selectionSet))]
          : [],
      );
      return { oneOf: members };
    }
    return this.leaf(type as GraphQLNamedType);
  }

  private objectShape(typeName: string, selectionSet: SelectionSetNode | undefined): SchemaObject {
    const type = this.schema.getType(typeName);
    if (!isObjectType(type)) throw new Error(`${typeName} is not an object type`);
    const fields = type.getFields();
    const properties: Record<string, SchemaObject> = {};
    for (const selection of selectionSet?.selections ?? []) {
      if (selection.kind !== Kind.FIELD) continue;
      const field = fields[selection.name.value];
      if (!field) continue;
      const key = selection.alias?.value ?? selection.name.value;
      properties[key] = withDescription(this.output(field.type, selection.selectionSet), field.description);
    }
    // GraphQL sends every selected field, null or not: all of them are always there.
    return {
      type: 'object',
      required: Object.keys(properties),
      properties,
      ...(type.description ? { description: type.description } : {}),
    };
  }

  /**
   * A reference to `shape` under its type's name. A type seen with other selections (an object
   * cut down to its id where it is nested) gets `<Type>Ref` for the id alone, else a numbered name.
   */
  private named(typeName: string, shape: SchemaObject): SchemaObject {
    const key = `${typeName}:${stableStringify(shape)}`;
    const known = this.shapes.get(key);
    if (known) return ref(known);
    const properties = Object.keys(shape.properties as object);
    let name = typeName;
    if (this.schemas[name]) name = properties.length === 1 && properties[0] === 'id' ? `${typeName}Ref` : typeName;
    for (let n = 2; this.schemas[name]; n++) name = `${typeName}${n}`;
    this.schemas[name] = shape;
    this.shapes.set(key, name);
    return ref(name);
  }
}

/** What an operation without a GraphQL description does, in words: "Retrieve a member", "Create a member category". */
function summaryOf(route: BridgeRoute, fieldName: string): string {
  const article = (noun: string) => (/^[aeiou]/i.test(noun) ? 'an' : 'a');
  if (route.method === 'GET' && route.resource) return `Retrieve ${article(route.resource)} ${route.resource}`;
  const [verb, ...rest] = fieldName.replace(/([A-Z])/g, ' $1').toLowerCase().split(' ');
  const noun = rest.join(' ');
  return `${verb[0].toUpperCase()}${verb.slice(1)} ${noun ? `${article(noun)} ${noun}` : ''}`.trim();
}

/** Sample values by a property's name, so an example reads like a request a person would send. */
const SAMPLES: Record<string, unknown> = {
  email: 'ada@example.org',
  name: 'Ada Lovelace',
  title: 'Annual meeting',
  currency: 'EUR',
  description: 'Membership dues',
  url: 'https://example.org/hooks/platform',
  country: 'DE',
  text: 'Hello',
};

/** An example value of `schema` (resolving references), for the document's readers and code generators. */
function exampleOf(schema: SchemaObject, schemas: Record<string, SchemaObject>, name: string, depth = 0): unknown {
  // Deep enough for a page of objects and their nested ones; a cycle ends in null where allowed.
  if (depth > 12) return schema.nullable ? null : undefined;
  if (typeof schema.$ref === 'string') return exampleOf(schemas[schema.$ref.split('/').pop()!] ?? {}, schemas, name, depth + 1);
  for (const key of ['allOf', 'anyOf', 'oneOf']) if (Array.isArray(schema[key])) return exampleOf((schema[key] as SchemaObject[])[0], schemas, name, depth);
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (name in SAMPLES && (schema.type === 'string' || schema.type === undefined)) return SAMPLES[name];
  switch (schema.type) {
    case 'object':
      return exampleObject((schema.properties ?? {}) as Record<string, SchemaObject>, schemas, (schema.required as string[] | undefined) ?? [], depth + 1);
    case 'array':
      return [exampleOf((schema.items ?? {}) as SchemaObject, schemas, name, depth + 1)].filter((item) => item !== undefined);
    case 'integer':
      return /amount/i.test(name) ? 2500 : name === 'limit' ? 20 : 1;
    case 'number':
      return 1.5;
    case 'boolean':
      return true;
    case 'string':
      if (schema.format === 'date') return '2027-01-31';
      if (schema.format === 'date-time') return '2027-01-31T09:30:00.000Z';
      if (name === 'id' || name.endsWith('Id') || name.endsWith('_id')) return '0192f5a8-3c4d-7e6f-8a9b-0c1d2e3f4a5b';
      return name;
    default:
      return undefined;
  }
}

/** An example of every JSON request body and success answer that has none, hand-written operations' too. */
function addExamples(document: OpenApiDocument): void {
  type Content = Record<string, { schema?: SchemaObject; example?: unknown }> | undefined;
  for (const operations of Object.values(document.paths)) {
    for (const operation of Object.values(operations)) {
      const json = [
        ((operation.requestBody as { content?: Content } | undefined)?.content ?? {})['application/json'],
        ...Object.entries(operation.responses)
          .filter(([status]) => status.startsWith('2'))
          .map(([, response]) => (response.content as Content)?.['application/json']),
      ];
      for (const content of json) {
        if (!content?.schema || content.example !== undefined) continue;
        const example = exampleOf(content.schema, document.components.schemas, 'body');
        if (example !== undefined) content.example = example;
      }
    }
  }
}

/** An example object: its required properties and a few more, with sample values. */
function exampleObject(properties: Record<string, SchemaObject>, schemas: Record<string, SchemaObject>, required: readonly string[], depth = 0): Record<string, unknown> {
  const names = [...new Set([...required, ...Object.keys(properties).slice(0, 6)])];
  return Object.fromEntries(
    names
      .map((name) => {
        const value = exampleOf(properties[name] ?? {}, schemas, name, depth);
        return [name, value === undefined && required.includes(name) ? null : value];
      })
      .filter(([, value]) => value !== undefined),
  );
}

function pathParameters(path: string): Set<string> {
  return new Set([...path.matchAll(/:(\w+)/g)].map((m) => m[1]));
}

function operationFor(route: BridgeRoute & { graphqlPath: string }, options: OpenApiOptions, components: Components): OperationObject {
  const [typeName, fieldName] = route.graphqlPath.split('.');
  const root = typeName === 'Query' ? options.schema.getQueryType() : options.schema.getMutationType();
  const field = root?.getFields()[fieldName];
  const operation = options.operations.get(route.graphqlPath);
  if (!field || !operation) throw new Error(`No operation for ${route.graphqlPath}`);
  const inPath = pathParameters(route.path);
  const inBody = route.method === 'POST' || route.method === 'PUT' || route.method === 'PATCH';
  const argument = (name: string): GraphQLArgument | undefined => field.args.find((arg) => arg.name === name);

  const parameters: Record<string, unknown>[] = [];
  const bodyProperties: Record<string, SchemaObject> = {};
  const bodyRequired: string[] = [];
  for (const variable of operation.variableDefinitions ?? []) {
    const name = variable.variable.name.value;
    const type = typeFromAST(options.schema, variable.type) as GraphQLInputType | undefined;
    if (!type) throw new Error(`Unknown type of $${name} in ${route.graphqlPath}`);
    const description = argument(name)?.description ?? undefined;
    const required = isNonNullType(type) && !variable.defaultValue;
    if (inPath.has(name)) {
      parameters.push({ name, in: 'path', required: true, schema: components.input(type), ...(description ? { description } : {}) });
    } else if (inBody) {
      bodyProperties[name] = withDescription(components.input(type), description);
      if (required) bodyRequired.push(name);
    } else {
      // A query string carries no null: an absent parameter is the argument left out.
      const schema = components.input(isNonNullType(type) ? type : new GraphQLNonNull(type));
      parameters.push({ name, in: 'query', required, schema, ...(description ? { description } : {}) });
    }
  }

  const selection = operation.selectionSet.selections[0];
  const selectionSet = selection?.kind === Kind.FIELD ? selection.selectionSet : undefined;
  // A lookup that finds nothing is 404, never `200 null` (see the bridge's execute).
  const found = isNonNullType(field.type) || !route.resource ? field.type : new GraphQLNonNull(field.type);
  const success = components.output(found, selectionSet);
  const status = String(route.responseStatus ?? 200);
  const area = options.extras?.areas?.find((candidate) => candidate.prefixes.some((prefix) => route.path === prefix || route.path.startsWith(`${prefix}/`)));
  return {
    operationId: operation.name?.value ?? route.graphqlPath,
    summary: field.description?.split('\n')[0] ?? summaryOf(route, fieldName),
    ...(area ? { tags: [area.name] } : {}),
    ...(field.description ? { description: field.description } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(inBody
      ? {
          requestBody: {
            required: bodyRequired.length > 0,
            content: {
              'application/json': {
                schema: { type: 'object', properties: bodyProperties, ...(bodyRequired.length ? { required: bodyRequired } : {}) },
              },
            },
          },
        }
      : {}),
    responses: {
      [status]: { description: 'Success', content: { 'application/json': { schema: success } } },
      ...(route.resource && options.extras
        ? { '404': { description: `No ${route.resource} with this id`, content: { 'application/json': { schema: ref('Error') } } } }
        : {}),
      ...(options.extras ? { default: { description: 'Error', content: { 'application/json': { schema: ref('Error') } } } } : {}),
    },
  };
}

/**
 * The OpenAPI 3.0 document of one REST mount, built from the routes and the operations sofa
 * runs for them: every referenced schema is defined (custom scalars included), nullable fields
 * say so, and nested objects are described as sofa sends them (cut to `{id}` unless expanded).
 */
export function buildOpenApiDocument(options: OpenApiOptions): OpenApiDocument {
  const components = new Components(options.schema, customScalarSchemas(options.schema));
  const paths: OpenApiDocument['paths'] = {};
  for (const [graphqlPath, route] of Object.entries(options.routes)) {
    const path = route.path.replace(/:(\w+)/g, '{$1}');
    (paths[path] ??= {})[route.method.toLowerCase()] = operationFor({ ...route, graphqlPath }, options, components);
  }
  const document: OpenApiDocument = {
    openapi: '3.0.3',
    info: { title: options.title, version: '1.0.0', description: options.description },
    servers: [{ url: options.basePath }],
    paths,
    components: { schemas: components.schemas },
  };
  if (options.extras?.areas) document.tags = options.extras.areas.map(({ name, description }) => ({ name, description }));
  if (options.extras) {
    document.components.schemas.Error = options.extras.errorSchema;
    document.components.securitySchemes = options.extras.securitySchemes;
    document.security = Object.keys(options.extras.securitySchemes).map((name) => ({ [name]: [] }));
    options.extras.extend?.(document);
    // The hand-written operations the extension added join their areas too.
    for (const [path, operations] of Object.entries(document.paths)) {
      const area = options.extras.areas?.find((candidate) => candidate.prefixes.some((prefix) => path === prefix || path.startsWith(`${prefix}/`)));
      if (area) for (const operation of Object.values(operations)) operation.tags ??= [area.name];
    }
  }
  addExamples(document);
  return document;
}
