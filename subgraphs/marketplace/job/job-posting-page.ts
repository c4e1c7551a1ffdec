import { ObjectType } from '../../shared/type-graphql.js';
import { PageOf } from '../../shared/page.type.js';
import { JobPosting } from './job-posting.entity.js';

/** One page of job postings, newest first, with the cursor of the next page. */
@ObjectType()
export class JobPostingPage extends PageOf(JobPosting) {}
