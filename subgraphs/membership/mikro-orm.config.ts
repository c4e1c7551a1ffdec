import { IdempotentOutcome } from '../shared/idempotent-outcome.entity.js';
import { idempotentOutcomesMigration } from '../shared/idempotent-outcomes.migration.js';
import { Member } from './member/member.entity.js';
import { MemberCategory } from './category/member-category.entity.js';
import { Invoice } from './finance/invoice/invoice.entity.js';
import { InvoiceSequence } from './finance/invoice/invoice-sequence.entity.js';
import { Payment } from './finance/payment/payment.entity.js';
import { Refund } from './finance/refund/refund.entity.js';
import { AuditEvent } from './audit/audit-event.entity.js';
import { Migration20261122030000Categories } from './migrations/Migration20261122030000Categories.js';
import { Migration20261122031000Finance } from './migrations/Migration20261122031000Finance.js';
import { Migration20261122032000Audit } from './migrations/Migration20261122032000Audit.js';
import { Event } from './event/event.entity.js';
import { Attendee } from './event/attendee.entity.js';
import { ChatChannel } from './chat/chat-channel.entity.js';
import { ChatChannelMember } from './chat/chat-channel-member.entity.js';
import { ChatMessage } from './chat/chat-message.entity.js';
import { ChatMessageRevision } from './chat/chat-message-revision.entity.js';
import { Migration20261122040000Chat } from './migrations/Migration20261122040000Chat.js';
import { ChatWebhook } from './webhook/chat-webhook.entity.js';
import { ChatWebhookDelivery } from './webhook/chat-webhook-delivery.entity.js';
import { ChatWebhookAttempt } from './webhook/chat-webhook-attempt.entity.js';
import { Migration20261122041000Webhooks } from './migrations/Migration20261122041000Webhooks.js';
import { Migration20261122000100Members } from './migrations/Migration20261122000100Members.js';
import { Migration20261122033000Events } from './migrations/Migration20261122033000Events.js';
import { Document } from './document/document.entity.js';
import { Migration20261123003000Documents } from './migrations/Migration20261123003000Documents.js';
import { Migration20261123001100MemberSkills } from './migrations/Migration20261123001100MemberSkills.js';
import { DocumentCategory } from './document-classification/document-category.entity.js';
import { DocumentCategoryRule } from './document-classification/document-category-rule.entity.js';
import { DocumentCategoryState } from './document-classification/document-category-state.entity.js';
import { DocumentClassifierModel } from './document-classification/document-classifier-model.entity.js';
import { Migration20261123004000DocumentClassification } from './migrations/Migration20261123004000DocumentClassification.js';
import { ChatAccessVersion } from './chat/chat-access-version.entity.js';
import { Migration20261124210000ChatAccessVersion } from './migrations/Migration20261124210000ChatAccessVersion.js';
import { Migration20261128170000WebhookSecretRotation } from './migrations/Migration20261128170000WebhookSecretRotation.js';
import { Migration20261201000100RenewalWindow } from './migrations/Migration20261201000100RenewalWindow.js';
import { Migration20261201000200RenewalRefunds } from './migrations/Migration20261201000200RenewalRefunds.js';
import { Migration20261201000300RenewalReminders } from './migrations/Migration20261201000300RenewalReminders.js';
import { Migration20261201000400PaidRegistrations } from './migrations/Migration20261201000400PaidRegistrations.js';
import { Migration20261201000500WebhookEvents } from './migrations/Migration20261201000500WebhookEvents.js';

import { DocumentBlob } from './document/document-blob.entity.js';
import { DocumentBlobChunk } from './document/document-blob-chunk.entity.js';
import { DocumentContent } from './document/document-content.entity.js';
import { DocumentTrainingRequest } from './document/document-training-request.entity.js';
import { DocumentUpload } from './document/document-upload.entity.js';

/** The membership subgraph's ORM: its entities and migrations, in the `membership` schema. */
export const membershipOrmOptions = {
  schema: 'membership',
  entities: [IdempotentOutcome, Member, Event, Attendee, ChatChannel, ChatChannelMember, ChatAccessVersion, ChatMessage, ChatMessageRevision, ChatWebhook, ChatWebhookDelivery, ChatWebhookAttempt, MemberCategory, Invoice, InvoiceSequence, Payment, Refund, AuditEvent, Document, DocumentCategory, DocumentCategoryRule, DocumentCategoryState, DocumentClassifierModel, DocumentBlob, DocumentBlobChunk, DocumentUpload, DocumentContent, DocumentTrainingRequest],
  migrations: [
    { name: 'Migration20261122000100Members', class: Migration20261122000100Members },
    { name: 'Migration20261122033000Events', class: Migration20261122033000Events },
    { name: 'Migration20261122040000Chat', class: Migration20261122040000Chat },
    { name: 'Migration20261122030000Categories', class: Migration20261122030000Categories },
    { name: 'Migration20261122031000Finance', class: Migration20261122031000Finance },
    { name: 'Migration20261122032000Audit', class: Migration20261122032000Audit },
    { name: 'Migration20261122041000Webhooks', class: Migration20261122041000Webhooks },
    { name: 'Migration20261123003000Documents', class: Migration20261123003000Documents },
    { name: 'Migration20261123001100MemberSkills', class: Migration20261123001100MemberSkills },
    { name: 'Migration20261123004000DocumentClassification', class: Migration20261123004000DocumentClassification },
    { name: 'Migration20261124210000ChatAccessVersion', class: Migration20261124210000ChatAccessVersion },
    { name: 'Migration20261128170000WebhookSecretRotation', class: Migration20261128170000WebhookSecretRotation },
    { name: 'Migration20261201000100RenewalWindow', class: Migration20261201000100RenewalWindow },
    { name: 'Migration20261201000200RenewalRefunds', class: Migration20261201000200RenewalRefunds },
    { name: 'Migration20261201000300RenewalReminders', class: Migration20261201000300RenewalReminders },
    { name: 'Migration20261201000400PaidRegistrations', class: Migration20261201000400PaidRegistrations },
    { name: 'Migration20261201000500WebhookEvents', class: Migration20261201000500WebhookEvents },
    idempotentOutcomesMigration('membership'),
  ],
};
