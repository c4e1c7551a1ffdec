/** The membership lifecycle's settings; read from the environment by platform/config.ts. */
export interface MembershipSettings {
  /** Members whose period ends within this many days are due for renewal: listed by `members(renewalDue: true)` and sent `member.renewal_due` once per period (MEMBER_RENEWAL_REMINDER_DAYS). */
  renewalReminderDays: number;
}

export const DEFAULT_MEMBERSHIP_SETTINGS: MembershipSettings = { renewalReminderDays: 30 };

/** The part of the membership context that reads them. */
export interface MembershipSettingsContext {
  membershipSettings?: MembershipSettings;
}
