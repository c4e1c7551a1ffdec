import { registerEnumType } from '../../shared/type-graphql.js';

/**
 * Which way a traceroute crosses the national border or the ISPs inside it. The GraphQL values
 * are the public API's own lowercase words, so REST and GraphQL read and write the same strings.
 */
export enum TraceDirection {
  outside_to_pk = 'outside_to_pk',
  pk_to_outside = 'pk_to_outside',
  cross_isp = 'cross_isp',
  within_isp = 'within_isp',
}

registerEnumType(TraceDirection, { name: 'TraceDirection' });
