import { registerEnumType } from '../../shared/type-graphql.js';

/** Which way a traceroute crosses the national border or the ISPs inside it. */
export enum TraceDirection {
  OUTSIDE_TO_PK = 'outside_to_pk',
  PK_TO_OUTSIDE = 'pk_to_outside',
  CROSS_ISP = 'cross_isp',
  WITHIN_ISP = 'within_isp',
}

registerEnumType(TraceDirection, { name: 'TraceDirection' });
