import { ObjectType } from '../../shared/type-graphql.js';
import { PageOf } from '../../shared/page.type.js';
import { JobApplication } from './job-application.entity.js';

/** One page of a posting's applications, newest first. */
@ObjectType()
export class JobApplicationPage extends PageOf(JobApplication) {}
