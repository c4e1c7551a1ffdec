import { Migration } from '@mikro-orm/migrations';

/** Paid events: a registration holds its place PENDING with an invoice until paid or past its deadline. */
export class Migration20261201000400PaidRegistrations extends Migration {
  override up(): void {
    this.addSql(`alter table "membership"."event" add column "payment_term_hours" int not null default 48;`);
    this.addSql(`alter table "membership"."invoice" add column "attendee_id" uuid null;`);
    this.addSql(`alter table "membership"."event_attendee" add column "cancellation_reason" varchar(20) null, add column "invoice_id" uuid null, add column "payment_due_at" timestamptz null;`);
    this.addSql(`create index "event_attendee_payment_due_index" on "membership"."event_attendee" ("payment_due_at") where "status" = 'pending';`);
  }
}
