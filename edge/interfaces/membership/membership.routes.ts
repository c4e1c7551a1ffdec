import type { BridgeRoutes } from '../../rest/bridge-routes.js';
import type { HandwrittenRoute } from '../../rest/route-table.js';

/** The document paths served by document-upload.ts before the bridge (bytes, streamed). */
export const membershipHandwrittenRoutes: readonly HandwrittenRoute[] = [
  { method: 'POST', path: '/documents/upload' },
  { method: 'PUT', path: '/documents/uploads/:id' },
  { method: 'GET', path: '/documents/:id/download' },
];

/**
 * The membership platform's REST paths (docs/specs/membership-platform-api.md), each bound
 * to one field of the graph. Paths are relative to the mount (/api/v1 by default).
 */
export const membershipRoutes: BridgeRoutes = {
  'Query.members': { method: 'GET', path: '/members' },
  'Query.member': { method: 'GET', path: '/members/:id', resource: 'member' },
  'Mutation.createMember': { method: 'POST', path: '/members', responseStatus: 201 },
  'Mutation.updateMember': { method: 'PUT', path: '/members/:id' },
  'Mutation.deleteMember': { method: 'DELETE', path: '/members/:id' },
  'Mutation.renewMember': { method: 'POST', path: '/members/:id/renew' },
  'Query.invoices': { method: 'GET', path: '/invoices' },
  'Mutation.createInvoice': { method: 'POST', path: '/invoices', responseStatus: 201 },
  'Mutation.createPayment': { method: 'POST', path: '/payments', responseStatus: 201 },
  'Mutation.createRefund': { method: 'POST', path: '/refunds', responseStatus: 201 },
  // `format=csv` is finance-report-csv.ts's; `format=json` is this route's default.
  'Query.financeReport': { method: 'GET', path: '/finance/reports', query: ['format'] },
  'Query.events': { method: 'GET', path: '/events' },
  'Query.event': { method: 'GET', path: '/events/:id', resource: 'event' },
  'Mutation.createEvent': { method: 'POST', path: '/events', responseStatus: 201 },
  'Mutation.registerForEvent': { method: 'POST', path: '/events/:id/register', responseStatus: 201 },
  'Query.eventAttendees': { method: 'GET', path: '/events/:id/attendees', resource: 'event' },
  'Mutation.checkInAttendee': { method: 'POST', path: '/events/:id/check-in' },
  'Query.chatChannels': { method: 'GET', path: '/chat/channels' },
  'Mutation.sendChatMessage': { method: 'POST', path: '/chat/send', responseStatus: 201 },
  'Query.chatMessages': { method: 'GET', path: '/chat/messages' },
  'Mutation.createChatWebhook': { method: 'POST', path: '/chat/webhooks', responseStatus: 201 },
  'Query.jobPostings': { method: 'GET', path: '/jobs' },
  'Query.jobPosting': { method: 'GET', path: '/jobs/:id', resource: 'job posting' },
  'Mutation.createJobPosting': { method: 'POST', path: '/jobs', responseStatus: 201 },
  // Document categories come before /documents/:id, whose pattern would take "categories" for an id.
  'Query.documentCategories': { method: 'GET', path: '/documents/categories' },
  'Query.documentCategory': { method: 'GET', path: '/documents/categories/:id', resource: 'document category' },
  'Mutation.createDocumentCategory': { method: 'POST', path: '/documents/categories', responseStatus: 201 },
  'Mutation.updateDocumentCategory': { method: 'PUT', path: '/documents/categories/:id' },
  'Mutation.deleteDocumentCategory': { method: 'DELETE', path: '/documents/categories/:id' },
  // Upload, download and the 202s of extract and classify are document-upload.ts, before the bridge.
  'Query.documents': { method: 'GET', path: '/documents' },
  'Query.document': { method: 'GET', path: '/documents/:id', resource: 'document' },
  'Query.documentExtraction': { method: 'GET', path: '/documents/:id/extract', resource: 'document' },
  'Query.documentClassification': { method: 'GET', path: '/documents/:id/classify', resource: 'document' },
  'Mutation.deleteDocument': { method: 'DELETE', path: '/documents/:id' },
  'Mutation.restoreDocument': { method: 'POST', path: '/documents/:id/restore' },
  'Mutation.setDocumentCategory': { method: 'PUT', path: '/documents/:id/category' },
  'Query.jobMatches': { method: 'GET', path: '/jobs/match' },
  'Mutation.applyToJob': { method: 'POST', path: '/jobs/:id/apply', responseStatus: 201 },
  'Query.jobApplicants': { method: 'GET', path: '/jobs/:id/applicants', resource: 'job posting' },
  'Mutation.publishJobPosting': { method: 'POST', path: '/jobs/:id/publish' },
  'Mutation.closeJobPosting': { method: 'POST', path: '/jobs/:id/close' },
  'Query.jobApplication': { method: 'GET', path: '/job-applications/:id', resource: 'job application' },
  'Mutation.moveJobApplication': { method: 'POST', path: '/job-applications/:id/move' },
  'Mutation.rejectJobApplication': { method: 'POST', path: '/job-applications/:id/reject' },
  'Mutation.hireJobApplication': { method: 'POST', path: '/job-applications/:id/hire' },
  'Mutation.withdrawJobApplication': { method: 'POST', path: '/job-applications/:id/withdraw' },
  // Tenders, vendors, sealed bids and awards (marketplace subgraph).
  'Query.tenders': { method: 'GET', path: '/tenders' },
  'Query.tender': { method: 'GET', path: '/tenders/:id', resource: 'tender' },
  'Mutation.createTender': { method: 'POST', path: '/tenders', responseStatus: 201 },
  'Mutation.updateTender': { method: 'PUT', path: '/tenders/:id' },
  'Mutation.publishTender': { method: 'POST', path: '/tenders/:id/publish' },
  'Mutation.cancelTender': { method: 'POST', path: '/tenders/:id/cancel' },
  'Mutation.completeTender': { method: 'POST', path: '/tenders/:id/complete' },
  'Mutation.placeBid': { method: 'POST', path: '/tenders/:id/bid', responseStatus: 201 },
  'Query.tenderBids': { method: 'GET', path: '/tenders/:id/bids' },
  'Mutation.awardTender': { method: 'PUT', path: '/tenders/:id/award' },
  'Mutation.cancelAward': { method: 'POST', path: '/tenders/:id/award/cancel' },
  'Query.bid': { method: 'GET', path: '/bids/:id', resource: 'bid' },
  'Mutation.amendBid': { method: 'PUT', path: '/bids/:id' },
  'Mutation.withdrawBid': { method: 'POST', path: '/bids/:id/withdraw' },
  'Mutation.confirmBid': { method: 'POST', path: '/bids/:id/confirm' },
  'Query.bidReceipt': { method: 'GET', path: '/bid-receipts/:id', resource: 'bid receipt' },
  'Query.vendors': { method: 'GET', path: '/vendors' },
  'Query.vendor': { method: 'GET', path: '/vendors/:id', resource: 'vendor' },
  'Mutation.registerVendor': { method: 'POST', path: '/vendors', responseStatus: 201 },
  // Beyond the specification's paths: what a GraphQL client can do, over REST too (Stripe's
  // conventions: a resource's actions are POSTs to /resource/:id/<action>).
  'Query.myVendor': { method: 'GET', path: '/vendors/me', resource: 'vendor profile' },
  'Mutation.activateMember': { method: 'POST', path: '/members/:id/activate' },
  'Mutation.suspendMember': { method: 'POST', path: '/members/:id/suspend' },
  'Mutation.reinstateMember': { method: 'POST', path: '/members/:id/reinstate' },
  'Mutation.cancelMember': { method: 'POST', path: '/members/:id/cancel' },
  'Query.memberCategories': { method: 'GET', path: '/member-categories' },
  'Query.memberCategory': { method: 'GET', path: '/member-categories/:id', resource: 'member category' },
  'Mutation.createMemberCategory': { method: 'POST', path: '/member-categories', responseStatus: 201 },
  'Query.invoice': { method: 'GET', path: '/invoices/:id', resource: 'invoice' },
  'Mutation.finalizeInvoice': { method: 'POST', path: '/invoices/:id/finalize' },
  'Mutation.voidInvoice': { method: 'POST', path: '/invoices/:id/void' },
  'Mutation.markInvoiceUncollectible': { method: 'POST', path: '/invoices/:id/mark-uncollectible' },
  'Mutation.deleteInvoice': { method: 'DELETE', path: '/invoices/:id' },
  'Query.payments': { method: 'GET', path: '/payments' },
  'Query.payment': { method: 'GET', path: '/payments/:id', resource: 'payment' },
  'Query.refunds': { method: 'GET', path: '/refunds' },
  'Query.refund': { method: 'GET', path: '/refunds/:id', resource: 'refund' },
  'Query.auditEvents': { method: 'GET', path: '/audit-events' },
  'Mutation.cancelEvent': { method: 'POST', path: '/events/:id/cancel' },
  'Mutation.updateEvent': { method: 'PUT', path: '/events/:id' },
  'Query.tenderDocuments': { method: 'GET', path: '/tenders/:id/documents' },
  'Query.tenderDocument': { method: 'GET', path: '/tenders/:id/documents/:documentId', resource: 'tender document' },
  'Query.tenderReleasePackage': { method: 'GET', path: '/tenders/:id/ocds', resource: 'tender' },
  'Mutation.cancelRegistration': { method: 'POST', path: '/events/:id/attendees/:attendeeId/cancel' },
  'Mutation.createChatChannel': { method: 'POST', path: '/chat/channels', responseStatus: 201 },
  'Query.chatChannel': { method: 'GET', path: '/chat/channels/:id', resource: 'chat channel' },
  'Mutation.joinChatChannel': { method: 'POST', path: '/chat/channels/:channelId/join' },
  'Mutation.leaveChatChannel': { method: 'POST', path: '/chat/channels/:channelId/leave' },
  'Query.chatMessage': { method: 'GET', path: '/chat/messages/:id', resource: 'chat message' },
  'Mutation.editChatMessage': { method: 'PUT', path: '/chat/messages/:id' },
  'Mutation.deleteChatMessage': { method: 'DELETE', path: '/chat/messages/:id' },
  'Query.chatWebhooks': { method: 'GET', path: '/chat/webhooks' },
  'Query.chatWebhookDeliveries': { method: 'GET', path: '/chat/webhooks/:webhookId/deliveries' },
  'Query.chatWebhook': { method: 'GET', path: '/chat/webhooks/:id', resource: 'chat webhook' },
  'Mutation.disableChatWebhook': { method: 'POST', path: '/chat/webhooks/:id/disable' },
  'Mutation.enableChatWebhook': { method: 'POST', path: '/chat/webhooks/:id/enable' },
  'Mutation.rotateChatWebhookSecret': { method: 'POST', path: '/chat/webhooks/:id/rotate-secret' },
  'Mutation.deleteChatWebhook': { method: 'DELETE', path: '/chat/webhooks/:id' },
  'Mutation.updateMemberCategory': { method: 'PUT', path: '/member-categories/:id' },
  'Mutation.deleteMemberCategory': { method: 'DELETE', path: '/member-categories/:id' },
  'Mutation.updateDocument': { method: 'PUT', path: '/documents/:id' },
};

/**
 * Objects with an id that sofa would otherwise cut down to `{id}` when nested: a page's items,
 * and a job's poster, whose name a job board shows.
 */
export const membershipExpanded = ['MemberPage.data', 'JobPostingPage.data', 'JobPosting.postedBy', 'EventPage.data', 'AttendeePage.data', 'CheckInResult.attendee', 'Attendee.member', 'ChatChannelPage.data', 'ChatMessagePage.data', 'CreatedChatWebhook.webhook', 'InvoicePage.data', 'JobApplicationPage.data', 'JobApplication.member', 'PostingMatch.job', 'CandidateMatch.candidate', 'DocumentPage.data'];

// Tenders: page items, lots, awards, receipts and a placed bid's parts are shown whole.
membershipExpanded.push('TenderPage.data', 'Tender.lots', 'Tender.awards', 'VendorPage.data', 'BidPage.data', 'Bid.receipts', 'BidWithReceipt.bid', 'BidWithReceipt.receipt', 'BidReceiptVerification.receipt');

// A tender's documents are shown whole.
membershipExpanded.push('TenderDocumentPage.data');

// Document categories: page items and their rules are shown whole.
membershipExpanded.push('DocumentCategoryPage.data', 'DocumentCategory.rules');

/**
 * Fields left out of the REST representations: a member's job postings live in another subgraph,
 * and every member page would otherwise fan out to it.
 */
export const membershipHidden = ['Member.jobPostings', 'MatchingJob.posting', 'MatchingMember.member', 'CandidateMatch.job', 'PostingMatch.posting', 'CandidateMatch.member'];
