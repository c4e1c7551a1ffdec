import { validate, type ValidationError } from 'class-validator';
import { DomainError } from '../../core/errors.js';

function firstProblem(errors: ValidationError[], prefix = ''): { param: string; message: string } | undefined {
  for (const error of errors) {
    const param = prefix + error.property;
    const message = error.constraints && Object.values(error.constraints)[0];
    if (message) return { param, message };
    const nested = firstProblem(error.children ?? [], `${param}.`);
    if (nested) return nested;
  }
  return undefined;
}

/**
 * type-graphql's argument validator, reporting the first broken rule as a BAD_USER_INPUT error
 * that names the parameter, which the REST bridge turns into its 400 body.
 */
export async function validateArguments(argValue: unknown): Promise<void> {
  if (argValue === null || typeof argValue !== 'object') return;
  const errors = await validate(argValue as object, { forbidUnknownValues: false });
  const problem = firstProblem(errors);
  if (problem) {
    throw new DomainError('BAD_USER_INPUT', problem.message, { param: problem.param, reason: 'invalid_parameter' });
  }
}
