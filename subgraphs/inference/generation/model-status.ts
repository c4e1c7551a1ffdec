import { registerEnumType } from '../../shared/type-graphql.js';

export enum ModelStatus {
  READY = 'ready',
  LOADING = 'loading',
  FAILED = 'failed',
  UNAVAILABLE = 'unavailable',
}

registerEnumType(ModelStatus, {
  name: 'InferenceModelStatus',
  description: 'Whether a model answers now: LOADING models are refused with SERVICE_UNAVAILABLE until ready; UNAVAILABLE ones (their upstream cannot be reached) with SERVICE_UNAVAILABLE too, while it is down.',
});
