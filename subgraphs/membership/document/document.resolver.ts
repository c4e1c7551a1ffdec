import { Arg, Args, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from '../../shared/type-graphql.js';
import { DateTimeResolver } from '../../shared/scalars.js';
import { Document } from './document.entity.js';
import { DocumentPage } from './document-page.js';
import { DocumentExtraction } from './document-extraction.type.js';
import { DocumentClassification } from './document-classification.type.js';
import { DocumentUploadTicket } from './document-upload-ticket.type.js';
import { CreateDocumentArgs, CreateDocumentUploadArgs, DocumentsArgs, UpdateDocumentArgs, UploadDocumentBase64Args } from './document.inputs.js';
import { DocumentService } from './document.service.js';
import type { DocumentContext } from './document-context.js';

const service = (ctx: DocumentContext) => new DocumentService(ctx.em, ctx.principal, ctx.documentSettings, ctx.documentStorage, ctx.documentClassifier);

@Resolver(() => Document)
export class DocumentResolver {
  @Query(() => DocumentPage, { description: 'Documents outside the trash (trashed: true for the trash), newest first; with q, best match first with a snippet.' })
  documents(@Args(() => DocumentsArgs) args: DocumentsArgs, @Ctx() ctx: DocumentContext): Promise<DocumentPage> {
    return service(ctx).list(args);
  }

  @Query(() => Document, { nullable: true })
  document(@Arg('id', () => ID) id: string, @Ctx() ctx: DocumentContext): Promise<Document | null> {
    return service(ctx).find(id);
  }

  @Query(() => DocumentExtraction, { description: 'The extracted text per page, method, confidence, language and key fields; only the status until READY.' })
  documentExtraction(@Arg('id', () => ID) id: string, @Ctx() ctx: DocumentContext): Promise<DocumentExtraction> {
    return service(ctx).extraction(id);
  }

  @Query(() => DocumentClassification, { description: 'The category in force and the classifier’s answer, computed again when the categories changed since.' })
  documentClassification(@Arg('id', () => ID) id: string, @Ctx() ctx: DocumentContext): Promise<DocumentClassification> {
    return service(ctx).classification(id);
  }

  @Mutation(() => DocumentUploadTicket, { description: 'Step 1 of a GraphQL upload: PUT the bytes to the returned path (membership REST base), with the same key.' })
  createDocumentUpload(@Args(() => CreateDocumentUploadArgs) args: CreateDocumentUploadArgs, @Ctx() ctx: DocumentContext): Promise<DocumentUploadTicket> {
    return service(ctx).createUpload(args.filename);
  }

  @Mutation(() => Document, { description: 'Step 2: the uploaded bytes become a document (PENDING); processing starts once it commits.' })
  createDocument(@Args(() => CreateDocumentArgs) args: CreateDocumentArgs, @Ctx() ctx: DocumentContext): Promise<Document> {
    return service(ctx).createDocument(args);
  }

  @Mutation(() => Document, { description: 'A small file in one call, as base64 (within the 1 MiB GraphQL body limit).' })
  uploadDocumentBase64(@Args(() => UploadDocumentBase64Args) args: UploadDocumentBase64Args, @Ctx() ctx: DocumentContext): Promise<Document> {
    return service(ctx).uploadBase64(args);
  }

  @Mutation(() => Document, { description: 'Moves the document to the trash; restorable until purgeAt.' })
  deleteDocument(@Arg('id', () => ID) id: string, @Ctx() ctx: DocumentContext): Promise<Document> {
    return service(ctx).trash(id);
  }

  @Mutation(() => Document)
  restoreDocument(@Arg('id', () => ID) id: string, @Ctx() ctx: DocumentContext): Promise<Document> {
    return service(ctx).restore(id);
  }

  @Mutation(() => Document, { description: 'A new title (null clears it) or tags (they replace the old ones).' })
  updateDocument(@Args(() => UpdateDocumentArgs) args: UpdateDocumentArgs, @Ctx() ctx: DocumentContext): Promise<Document> {
    return service(ctx).update(args);
  }

  @Mutation(() => Document, { description: 'The user’s category for the document; kept over the classifier’s and used to train it.' })
  setDocumentCategory(@Arg('id', () => ID) id: string, @Arg('category', () => String) category: string, @Ctx() ctx: DocumentContext): Promise<Document> {
    return service(ctx).setCategory(id, category);
  }

  @FieldResolver(() => DateTimeResolver, { nullable: true, description: 'When a trashed document and its bytes are purged.' })
  purgeAt(@Root() document: Document, @Ctx() ctx: DocumentContext): Date | null {
    return service(ctx).purgeAt(document);
  }
}
