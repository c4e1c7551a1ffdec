import type { SubgraphContext } from '../../shared/context.js';
import { DomainError } from '../../../core/errors.js';
import { UUID } from '../../shared/pagination.js';
import { JobApplication } from './job-application.entity.js';
import { applicationTopic, JobApplicationService, type ApplicationStatusEvent } from './job-application.service.js';

export interface StatusChangedArgs {
  applicationId?: string | null;
  memberId?: string | null;
}

/**
 * The stream behind `jobApplicationStatusChanged`: the principal's account and mode's topic,
 * filtered to one application or one member's applications, each event re-read from the
 * database (the event carries ids only, so nothing stale or out of scope is sent).
 */
export async function statusChangedStream(args: StatusChangedArgs, context: SubgraphContext): Promise<AsyncIterableIterator<JobApplication>> {
  if (!args.applicationId === !args.memberId) {
    throw new DomainError('BAD_USER_INPUT', 'Give exactly one of applicationId and memberId', { param: 'applicationId', reason: 'invalid_parameter' });
  }
  const id = (args.applicationId ?? args.memberId)!;
  if (!UUID.test(id)) throw new DomainError('BAD_USER_INPUT', 'Not an id', { param: args.applicationId ? 'applicationId' : 'memberId', reason: 'invalid_parameter' });
  if (args.applicationId && !(await new JobApplicationService(context.em.fork(), context.principal).find(args.applicationId))) {
    throw new DomainError('NOT_FOUND', `No job_application with id "${args.applicationId}"`, { param: 'applicationId', reason: 'job_application_not_found' });
  }
  const source = context.pubsub.subscribe(applicationTopic(context.principal))[Symbol.asyncIterator]();
  // Subscribing is synchronous in the in-process bus; touching next() starts listening at once.
  let first: Promise<IteratorResult<unknown>> | undefined = source.next();

  async function* deliver(): AsyncGenerator<JobApplication> {
    try {
      for (;;) {
        const step = await (first ?? source.next());
        first = undefined;
        if (step.done) return;
        const event = step.value as ApplicationStatusEvent;
        if (args.applicationId && event.applicationId !== args.applicationId) continue;
        if (args.memberId && event.memberId !== args.memberId.toLowerCase()) continue;
        context.em.clear();
        context.loaders.clear();
        const application = await new JobApplicationService(context.em, context.principal).find(event.applicationId);
        if (application) yield application;
      }
    } finally {
      await source.return?.();
    }
  }

  const generator = deliver();
  const stream: AsyncIterableIterator<JobApplication> = {
    next: () => generator.next(),
    return: async (value?: unknown) => {
      await source.return?.();
      return generator.return(value as never);
    },
    throw: (error?: unknown) => generator.throw(error),
    [Symbol.asyncIterator]() {
      return stream;
    },
  };
  return stream;
}
