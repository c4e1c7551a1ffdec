import { MapperKind, mapSchema } from '@graphql-tools/utils';
import {
  getNamedType,
  isObjectType,
  Kind,
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type GraphQLFormattedError,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';

/**
 * The REST name of a schema coordinate, `Type.field` or `Type.field(argument:)`, when it differs
 * from the graph's; undefined keeps the graph's name.
 */
export type RestNamer = (coordinate: string) => string | undefined;

/** `message` with every mention of the graph's parameter `param` under its REST name `rest`. */
export function restMessage(message: string, param: string, rest: string): string {
  return message.replace(new RegExp(`\\b${param}\\b`, 'g'), rest);
}

/** A REST view whose names differ from the graph's, and the way back to the graph. */
export interface RenamedView {
  /** The schema sofa builds routes from, with every field and argument under its REST name. */
  schema: GraphQLSchema;
  /** An operation sofa built on `schema` as the graph's operation. */
  toGraphQL(document: DocumentNode): DocumentNode;
  /** The graph's answer to that operation under the REST names of `document` (sofa's). */
  dataToRest(document: DocumentNode, data: Record<string, unknown>): Record<string, unknown>;
  /** An error of the graph with its `param` (a root field's argument) under the REST name. */
  errorToRest(error: GraphQLFormattedError, rootType: string, rootField: string): GraphQLFormattedError;
}

/**
 * Renames a schema for a REST view. GraphQL stays the source of truth: a REST call runs the
 * graph's own operation, its answer is read back under the REST names, and an argument error
 * names the REST parameter.
 */
export function renameForRest(schema: GraphQLSchema, restName: RestNamer): RenamedView {
  // `Type.restField` → graph field, `Type.field(restArg:)` → graph argument, by REST names.
  const fields = new Map<string, string>();
  const args = new Map<string, string>();
  // `Type.field(graphArg:)` → REST argument, by graph names (for errors).
  const argsToRest = new Map<string, string>();
  const renamed = mapSchema(schema, {
    [MapperKind.OBJECT_FIELD]: (config, fieldName, typeName) => {
      const fieldRest = restName(`${typeName}.${fieldName}`) ?? fieldName;
      fields.set(`${typeName}.${fieldRest}`, fieldName);
      const renamedArgs = Object.fromEntries(
        Object.entries(config.args ?? {}).map(([argName, argConfig]) => {
          const argRest = restName(`${typeName}.${fieldName}(${argName}:)`) ?? argName;
          args.set(`${typeName}.${fieldRest}(${argRest}:)`, argName);
          argsToRest.set(`${typeName}.${fieldName}(${argName}:)`, argRest);
          return [argRest, argConfig];
        }),
      );
      return [fieldRest, { ...config, args: renamedArgs }];
    },
  });

  const toGraphQL = (document: DocumentNode): DocumentNode => {
    const typeInfo = new TypeInfo(renamed);
    return visit(
      document,
      visitWithTypeInfo(typeInfo, {
        // Renamed on leave: on enter, TypeInfo would look the graph's name up in the REST schema.
        Argument: {
          leave(node) {
            const parent = typeInfo.getParentType();
            const field = typeInfo.getFieldDef();
            const name = parent && field && args.get(`${parent.name}.${field.name}(${node.name.value}:)`);
            return name && name !== node.name.value ? { ...node, name: { kind: Kind.NAME, value: name } } : undefined;
          },
        },
        Field: {
          leave(node) {
            const parent = typeInfo.getParentType();
            const name = parent && fields.get(`${parent.name}.${node.name.value}`);
            return name && name !== node.name.value ? { ...node, name: { kind: Kind.NAME, value: name } } : undefined;
          },
        },
      }),
    );
  };

  // The answer is renamed rather than the operation aliased: a page of traces would need more
  // aliases than the edge's abuse rules let any operation carry.
  const renameValue = (value: unknown, selectionSet: SelectionSetNode, type: GraphQLNamedType): unknown => {
    if (Array.isArray(value)) return value.map((item) => renameValue(item, selectionSet, type));
    if (value === null || typeof value !== 'object' || !isObjectType(type)) return value;
    const source = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const selection of selectionSet.selections) {
      if (selection.kind !== Kind.FIELD) continue;
      const restName = selection.name.value;
      const graphKey = selection.alias?.value ?? fields.get(`${type.name}.${restName}`) ?? restName;
      const definition = type.getFields()[restName];
      const item = source[graphKey];
      out[selection.alias?.value ?? restName] =
        selection.selectionSet && definition ? renameValue(item, selection.selectionSet, getNamedType(definition.type)) : item;
    }
    return out;
  };

  const dataToRest = (document: DocumentNode, data: Record<string, unknown>): Record<string, unknown> => {
    const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
    const root = operation && renamed.getRootType(operation.operation);
    return operation && root ? (renameValue(data, operation.selectionSet, root) as Record<string, unknown>) : data;
  };

  const errorToRest = (error: GraphQLFormattedError, rootType: string, rootField: string): GraphQLFormattedError => {
    const param = error.extensions?.param;
    if (typeof param !== 'string') return error;
    const rest = argsToRest.get(`${rootType}.${rootField}(${param}:)`);
    if (!rest || rest === param) return error;
    return {
      ...error,
      message: restMessage(error.message, param, rest),
      extensions: { ...error.extensions, param: rest },
    };
  };

  return { schema: renamed, toGraphQL, dataToRest, errorToRest };
}
