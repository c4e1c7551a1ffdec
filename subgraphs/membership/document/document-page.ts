import { ObjectType } from '../../shared/type-graphql.js';
import { PageOf } from '../../shared/page.type.js';
import { Document } from './document.entity.js';

/** One page of documents (newest first, or by rank with `q`), with the cursor of the next page. */
@ObjectType()
export class DocumentPage extends PageOf(Document) {}
