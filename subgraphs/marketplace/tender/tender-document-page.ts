import { ObjectType } from '../../shared/type-graphql.js';
import { PageOf } from '../../shared/page.type.js';
import { TenderDocumentType } from './tender-document.type.js';

/** A tender's documents, in the shape of every list: all of them at once (a tender lists at most 50). */
@ObjectType()
export class TenderDocumentPage extends PageOf(TenderDocumentType) {}
