import { Migration } from '@mikro-orm/migrations';

/** Invoices with their per-account number sequence, payments and refunds, scoped by account and mode. */
export class Migration20261122031000Finance extends Migration {
  override up(): void {
    this.addSql(`create table "membership"."invoice" ("id" uuid not null, "account_id" uuid not null, "mode" varchar(4) not null, "number" varchar(20) null, "member_id" uuid not null, "category_id" uuid null, "kind" varchar(12) not null, "status" varchar(14) not null, "currency" varchar(3) not null, "description" varchar(500) null, "lines" jsonb not null, "total" int not null, "amount_paid" int not null default 0, "amount_refunded" int not null default 0, "issued_on" date null, "due_on" date not null, "period_start" date null, "period_end" date null, "paid_at" timestamptz null, "voided_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "invoice_scope_issued_index" on "membership"."invoice" ("account_id", "mode", "issued_on");`);
    this.addSql(`create index "invoice_scope_member_index" on "membership"."invoice" ("account_id", "mode", "member_id", "created_at");`);
    this.addSql(`create index "invoice_scope_created_index" on "membership"."invoice" ("account_id", "mode", "created_at", "id");`);
    this.addSql(`alter table "membership"."invoice" add constraint "invoice_scope_number_unique" unique ("account_id", "mode", "number");`);

    this.addSql(`create table "membership"."invoice_sequence" ("account_id" uuid not null, "mode" varchar(4) not null, "last_number" int not null, primary key ("account_id", "mode"));`);

    this.addSql(`create table "membership"."payment" ("id" uuid not null, "account_id" uuid not null, "mode" varchar(4) not null, "invoice_id" uuid not null, "member_id" uuid not null, "category_id" uuid null, "amount" int not null, "currency" varchar(3) not null, "method" varchar(16) not null, "reference" varchar(200) null, "received_at" timestamptz not null, "amount_refunded" int not null default 0, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "payment_invoice_index" on "membership"."payment" ("invoice_id");`);
    this.addSql(`create index "payment_scope_received_index" on "membership"."payment" ("account_id", "mode", "received_at");`);
    this.addSql(`create index "payment_scope_created_index" on "membership"."payment" ("account_id", "mode", "created_at", "id");`);

    this.addSql(`create table "membership"."refund" ("id" uuid not null, "account_id" uuid not null, "mode" varchar(4) not null, "payment_id" uuid not null, "invoice_id" uuid not null, "member_id" uuid not null, "category_id" uuid null, "amount" int not null, "currency" varchar(3) not null, "reason" varchar(500) null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "refund_payment_index" on "membership"."refund" ("payment_id");`);
    this.addSql(`create index "refund_scope_created_index" on "membership"."refund" ("account_id", "mode", "created_at", "id");`);

    // Invariants the services keep under row locks, held by the database too.
    this.addSql(`alter table "membership"."invoice" add constraint "invoice_amounts_check" check (amount_refunded >= 0 and amount_refunded <= amount_paid and amount_paid - amount_refunded <= total);`);
    this.addSql(`alter table "membership"."payment" add constraint "payment_amounts_check" check (amount > 0 and amount_refunded >= 0 and amount_refunded <= amount);`);
  }
}
