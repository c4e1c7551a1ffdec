import type { ExecutionResult, GraphQLFormattedError } from 'graphql';
import { expect } from 'vitest';
import type { Principal } from '../../../core/principal.js';
import type { Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { startMembershipSubgraph } from '../../support/membership-subgraph.js';
import { run } from '../../support/subgraph-harness.js';

/** A membership subgraph on a fresh database, with helpers for members, categories and money. */
export async function startMembership() {
  const testbed = await startMembershipSubgraph();
  const subgraph: Subgraph = testbed.subgraph;

  async function gql<T = Record<string, unknown>>(principal: Principal, source: string, variables?: Record<string, unknown>): Promise<ExecutionResult<T>> {
    return run<T>(subgraph, principal, source, variables);
  }

  /** Runs and asserts success; answers the data. */
  async function ok<T = Record<string, any>>(principal: Principal, source: string, variables?: Record<string, unknown>): Promise<T> {
    const result = await gql<T>(principal, source, variables);
    expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
    return result.data!;
  }

  /** Runs and asserts an error; answers its extensions. */
  async function fails(principal: Principal, source: string, variables?: Record<string, unknown>): Promise<GraphQLFormattedError['extensions']> {
    const result = await gql(principal, source, variables);
    expect(result.errors?.length, 'expected a GraphQL error').toBeGreaterThan(0);
    return result.errors![0].extensions;
  }

  function sql<T = Record<string, any>>(query: string, params: unknown[] = []): Promise<T[]> {
    return subgraph.orm.em.getConnection().execute<T[]>(query, params);
  }

  return {
    subgraph,
    gql,
    ok,
    fails,
    sql,
    close: testbed.close,
  };
}

export type Membership = Awaited<ReturnType<typeof startMembership>>;

export const MEMBER_FIELDS = 'id name email status categoryId joinedOn periodStart periodEnd graceEndsOn livemode';
export const INVOICE_FIELDS =
  'id number memberId categoryId kind status currency total amountPaid amountRefunded amountRemaining issuedOn dueOn periodStart periodEnd overdue lines { description quantity unitAmount amount }';

export const CREATE_CATEGORY = `mutation($name: String!, $feeAmount: Int!, $currency: String!, $period: CategoryPeriod!, $periodYears: Int, $renewalBasis: RenewalBasis, $fixedMonth: Int, $fixedDay: Int, $graceDays: Int, $renewalWindowDays: Int) {
  createMemberCategory(name: $name, feeAmount: $feeAmount, currency: $currency, period: $period, periodYears: $periodYears, renewalBasis: $renewalBasis, fixedMonth: $fixedMonth, fixedDay: $fixedDay, graceDays: $graceDays, renewalWindowDays: $renewalWindowDays) {
    id name feeAmount currency period periodYears renewalBasis fixedMonth fixedDay graceDays renewalWindowDays livemode
  }
}`;
export const CREATE_MEMBER = `mutation($name: String!, $email: String!, $joinedOn: LocalDate, $categoryId: ID) {
  createMember(name: $name, email: $email, joinedOn: $joinedOn, categoryId: $categoryId) { ${MEMBER_FIELDS} }
}`;
export const RENEW = `mutation($id: ID!) { renewMember(id: $id) { ${MEMBER_FIELDS} } }`;
export const INVOICES = `query($memberId: ID, $status: InvoiceStatus, $issuedFrom: LocalDate, $issuedTo: LocalDate, $overdue: Boolean, $limit: Int, $after: String) {
  invoices(memberId: $memberId, status: $status, issuedFrom: $issuedFrom, issuedTo: $issuedTo, overdue: $overdue, limit: $limit, after: $after) { data { ${INVOICE_FIELDS} } hasMore nextCursor }
}`;
export const CREATE_INVOICE = `mutation($memberId: ID!, $currency: String!, $lines: [InvoiceLineInput!]!, $dueOn: LocalDate, $status: NewInvoiceStatus) {
  createInvoice(memberId: $memberId, currency: $currency, lines: $lines, dueOn: $dueOn, status: $status) { ${INVOICE_FIELDS} }
}`;
export const PAY = `mutation($invoiceId: ID!, $amount: Int!, $method: PaymentMethod!, $receivedAt: DateTime, $currency: String) {
  createPayment(invoiceId: $invoiceId, amount: $amount, method: $method, receivedAt: $receivedAt, currency: $currency) { id invoiceId memberId amount currency method amountRefunded amountRefundable receivedAt invoice { id status amountRemaining } }
}`;
export const REFUND = `mutation($paymentId: ID!, $amount: Int, $reason: String) {
  createRefund(paymentId: $paymentId, amount: $amount, reason: $reason) { id paymentId invoiceId amount currency reason }
}`;
export const AUDIT = `query($entity: String, $entityId: ID, $limit: Int, $after: String) {
  auditEvents(entity: $entity, entityId: $entityId, limit: $limit, after: $after) { data { id keyId entity entityId action before after createdAt } hasMore nextCursor }
}`;

/** A calendar date built apart from the code under test; Date.UTC rolls days over. */
export function utcDate(year: number, monthIndex: number, day: number): string {
  return new Date(Date.UTC(year, monthIndex, day)).toISOString().slice(0, 10);
}

export const NOW = new Date();
export const [Y, M, D] = [NOW.getUTCFullYear(), NOW.getUTCMonth(), NOW.getUTCDate()];
export const TODAY = utcDate(Y, M, D);

let counter = 0;
export function uniqueEmail(local = 'member'): string {
  return `${local}.${++counter}@example.org`;
}
