import { createSubgraph, type Subgraph, type SubgraphParts } from '../shared/subgraph.js';
import { ApiKeyResolver } from './api-key/api-key.resolver.js';
import { withKeyStore, type KeyStoreContext, type KeyStoreSubgraphOptions } from '../shared/key-store.context.js';
import { membershipOrmOptions } from './mikro-orm.config.js';
import { ChatChannelResolver } from './chat/chat-channel.resolver.js';
import { ChatMessageResolver } from './chat/chat-message.resolver.js';
import { chatChannelReference, chatMessageReference } from './chat/chat.reference.js';
import { ChatWebhookResolver } from './webhook/chat-webhook.resolver.js';
import { WebhookRelayResolver } from './webhook/webhook-relay.resolver.js';
import { DEFAULT_WEBHOOK_SETTINGS, type WebhookSettings, type WebhookSettingsContext } from './webhook/webhook-settings.js';
import { memberReference } from './member/member.reference.js';
import { MemberResolver } from './member/member.resolver.js';
import { CandidateMatchResolver } from './member/candidate-match.resolver.js';
import { MatchingMemberType } from './member/matching-member.type.js';
import { matchingJobReference } from './member/matching-job.reference.js';
import { matchingMemberReference } from './member/matching-member.reference.js';
import { CategoryResolver } from './category/category.resolver.js';
import { InvoiceResolver } from './finance/invoice/invoice.resolver.js';
import { periodInvoicing } from './finance/invoice/period-invoicing.js';
import { registrationInvoicing } from './finance/invoice/registration-invoicing.js';
import type { RegistrationBillingContext } from './event/registration-billing.js';
import type { MemberBillingContext } from './member/member-billing.js';
import { DEFAULT_MEMBERSHIP_SETTINGS, type MembershipSettings, type MembershipSettingsContext } from './member/membership-settings.js';
import { PaymentResolver } from './finance/payment/payment.resolver.js';
import { RefundResolver } from './finance/refund/refund.resolver.js';
import { ReportResolver } from './finance/report/report.resolver.js';
import { AuditResolver } from './audit/audit.resolver.js';
import { EventResolver } from './event/event.resolver.js';
import { AttendeeResolver } from './event/attendee.resolver.js';
import { DocumentCategoryResolver } from './document-classification/document-category.resolver.js';
import { DocumentResolver } from './document/document.resolver.js';
import { documentReference } from './document/document.reference.js';
import { DEFAULT_DOCUMENT_SETTINGS, type DocumentSettings } from './document/document-settings.js';
import type { DocumentContext } from './document/document-context.js';
import type { DocumentClassifier } from './document/document-pipeline.js';
import { PostgresDocumentStorage } from './document/postgres-document-storage.js';
import { createDocumentRoutes } from './document/document.routes.js';
import { defaultDocumentClassifier } from './document/document-worker.factory.js';
import { verifyTenderDocumentGrant, type DocumentGrantContext } from './document-sharing/document-grant.js';
import { TenderDocumentFileType } from './document-sharing/tender-document-file.type.js';
import { TenderDocumentType } from './document-sharing/tender-document.type.js';
import { tenderDocumentFileReference, tenderDocumentReference } from './document-sharing/tender-document.reference.js';

export const membershipParts: SubgraphParts = {
  name: 'membership',
  orm: membershipOrmOptions,
  resolvers: [MemberResolver, ApiKeyResolver, EventResolver, AttendeeResolver, ChatChannelResolver, ChatMessageResolver, ChatWebhookResolver, WebhookRelayResolver, CategoryResolver, InvoiceResolver, PaymentResolver, RefundResolver, ReportResolver, AuditResolver, CandidateMatchResolver, DocumentResolver, DocumentCategoryResolver],
  // MatchingMember is reached only by reference (Query.jobMatches in the marketplace): no field of ours returns it.
  orphanedTypes: [MatchingMemberType, TenderDocumentType, TenderDocumentFileType],
  references: { Member: memberReference, ChatChannel: chatChannelReference, ChatMessage: chatMessageReference, MatchingJob: matchingJobReference, MatchingMember: matchingMemberReference, Document: documentReference, TenderDocument: tenderDocumentReference, TenderDocumentFile: tenderDocumentFileReference },
  servesKinds: ['live', 'test'],
};

/** Builds the membership subgraph (members, API-key settings) and migrates its schema. */
export async function createMembershipSubgraph(
  options: KeyStoreSubgraphOptions & { webhooks?: WebhookSettings; documents?: DocumentSettings; documentClassifier?: DocumentClassifier; membership?: MembershipSettings },
): Promise<Subgraph<KeyStoreContext & WebhookSettingsContext & DocumentContext & MemberBillingContext & RegistrationBillingContext & MembershipSettingsContext & DocumentGrantContext>> {
  const withKeys = withKeyStore(options.keyStore);
  const webhookSettings = options.webhooks ?? DEFAULT_WEBHOOK_SETTINGS;
  const documentSettings = options.documents ?? DEFAULT_DOCUMENT_SETTINGS;
  const documentClassifier = options.documentClassifier ?? defaultDocumentClassifier();
  const membershipSettings = options.membership ?? DEFAULT_MEMBERSHIP_SETTINGS;
  const subgraph = await createSubgraph(membershipParts, options, (base) => ({
    ...withKeys(base),
    webhookSettings,
    membershipSettings,
    documentSettings,
    documentStorage: new PostgresDocumentStorage(base.em),
    documentClassifier,
    // Members' paid periods are invoiced by finance, which member/ does not import.
    memberBilling: periodInvoicing,
    // A tender's documents are read by the vendors who may bid through grants the marketplace signs.
    documentGrants: { verify: (grant: string) => verifyTenderDocumentGrant(options.internalSecret, grant) },
    // Places at paid events likewise, through event/registration-billing.ts's port.
    registrationBilling: registrationInvoicing,
  }));
  // Document bytes in and out: streamed, so not through GraphQL (the edge relays these routes).
  subgraph.httpRoutes = createDocumentRoutes({ em: subgraph.orm.em, settings: documentSettings, storage: (em) => new PostgresDocumentStorage(em), logger: options.logger });
  return subgraph;
}
