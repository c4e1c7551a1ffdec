import { registerEnumType } from '../../shared/type-graphql.js';

export enum JobApplicationStatus {
  ACTIVE = 'active',
  REJECTED = 'rejected',
  HIRED = 'hired',
  WITHDRAWN = 'withdrawn',
}

registerEnumType(JobApplicationStatus, { name: 'JobApplicationStatus', description: 'Only active applications move.' });

/** Where an active application stands, in order. */
export enum JobApplicationStage {
  APPLIED = 'applied',
  SCREENING = 'screening',
  INTERVIEW = 'interview',
  OFFER = 'offer',
}

registerEnumType(JobApplicationStage, { name: 'JobApplicationStage' });
