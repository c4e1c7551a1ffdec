import { ObjectType } from '../../shared/type-graphql.js';
import { PageOf } from '../../shared/page.type.js';
import { DocumentCategory } from './document-category.entity.js';

@ObjectType()
export class DocumentCategoryPage extends PageOf(DocumentCategory) {}
