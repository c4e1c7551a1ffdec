import { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { isoDate } from '../../cli/args.js';

describe('isoDate', () => {
  it.each([
    ['2027-01-31', '2027-01-31T00:00:00.000Z'],
    ['2027-01-31T12:30:00Z', '2027-01-31T12:30:00.000Z'],
    ['2027-01-31T12:30:00.250+02:00', '2027-01-31T10:30:00.250Z'],
    ['2028-02-29T23:59:59-0100', '2028-03-01T00:59:59.000Z'],
  ])('reads %s as %s', (value, instant) => {
    expect(isoDate(value, '--expires-at').toISOString()).toBe(instant);
  });

  it.each(['2027-02-29', '2027-04-31', '2027-13-01', '2027-01-31T24:00', '2027-1-31', '31/01/2027', 'tomorrow', '', '2027-01-31T12:00:00Zjunk'])(
    'refuses %j as BAD_USER_INPUT',
    (value) => {
      let thrown: unknown;
      try {
        isoDate(value, '--expires-at');
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(GraphQLError);
      expect((thrown as GraphQLError).extensions).toMatchObject({ code: 'BAD_USER_INPUT', param: 'expires-at' });
    },
  );
});
