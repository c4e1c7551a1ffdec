/** Something answers on the embedded PostgreSQL's port, but not as the platform's database. */
export class DatabaseUnreachableError extends Error {
  override name = 'DatabaseUnreachableError';
}
