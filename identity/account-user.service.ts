import { createHash, randomBytes } from 'node:crypto';
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { Account } from './account.entity.js';
import { AccountUser, USER_ROLES, type UserRole } from './account-user.entity.js';
import { AccountUserError } from './account-user.error.js';
import { ApiKey } from './api-key.entity.js';
import { DashboardInvitation } from './dashboard-invitation.entity.js';
import { DashboardSession } from './dashboard-session.entity.js';
import { IdentityService } from './identity.service.js';
import { hashPassword, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, verifyPassword } from './password.js';

export interface UserView {
  id: string;
  email: string;
  name: string;
  role: UserRole;
  platformAdmin: boolean;
}

export interface InvitationView {
  id: string;
  email: string;
  role: UserRole;
  expiresAt: string;
  acceptedAt: string | null;
}

export interface SessionSettings {
  /** A session ends after this long without a request. */
  idleMs: number;
  /** and after this long whatever the activity. */
  maxMs: number;
}

export const INVITATION_TTL_MS = 7 * 86_400_000;
/** lastSeenAt is written at most this often, so an active dashboard does not write on every request. */
const TOUCH_EVERY_MS = 60_000;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,189}\.[^\s@]{1,60}$/;

function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

export function userView(user: AccountUser): UserView {
  return { id: user.id, email: user.email, name: user.name, role: user.role, platformAdmin: user.platformAdmin };
}

function invitationView(invitation: DashboardInvitation): InvitationView {
  return {
    id: invitation.id,
    email: invitation.email,
    role: invitation.role,
    expiresAt: invitation.expiresAt.toISOString(),
    acceptedAt: invitation.acceptedAt?.toISOString() ?? null,
  };
}

/** An email as stored and compared: trimmed and lowercased; refused unless it looks like one. */
export function normalEmail(email: string): string {
  const normal = email.trim().toLowerCase();
  if (!EMAIL.test(normal)) throw new AccountUserError('BAD_USER_INPUT', 400, 'invalid_body', 'email must be an email address');
  return normal;
}

function checkRole(role: string): UserRole {
  if (!(USER_ROLES as readonly string[]).includes(role)) {
    throw new AccountUserError('BAD_USER_INPUT', 400, 'invalid_body', `role must be one of ${USER_ROLES.join(', ')}`);
  }
  return role as UserRole;
}

function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
    throw new AccountUserError('BAD_USER_INPUT', 400, 'weak_password', `Passwords are ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`);
  }
}

function checkName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed || trimmed.length > 120) throw new AccountUserError('BAD_USER_INPUT', 400, 'invalid_body', 'name must be 1-120 characters');
  return trimmed;
}

/** The dashboard's people: users of an account, their sessions, and owners' invitations. */
export class AccountUserService {
  constructor(
    private readonly em: EntityManager,
    private readonly sessions: SessionSettings = { idleMs: 12 * 3600_000, maxMs: 7 * 86_400_000 },
  ) {}

  /** The command-line tool's first owner of an account (created when it does not exist). */
  async createOwner(input: { account: string; email: string; name?: string; password: string; platformAdmin?: boolean }): Promise<{ user: UserView; account: Account }> {
    const email = normalEmail(input.email);
    checkPassword(input.password);
    const name = checkName(input.name ?? email.split('@')[0]);
    const account = await new IdentityService(this.em).ensureAccount(input.account);
    if (await this.em.count(AccountUser, { email })) throw this.userExists(email);
    const user = this.em.create(AccountUser, {
      account,
      email,
      name,
      passwordHash: await hashPassword(input.password),
      role: 'owner',
      platformAdmin: input.platformAdmin ?? false,
      createdAt: new Date(),
    });
    await this.flushOrConflict(email);
    return { user: userView(user), account };
  }

  /** The user with this email and password, or null (in the same time whether or not the email exists). */
  async checkCredentials(email: string, password: string): Promise<AccountUser | null> {
    const user = await this.em.findOne(AccountUser, { email: email.trim().toLowerCase() }, { populate: ['account'] });
    const matches = await verifyPassword(user?.passwordHash, password);
    return matches ? user : null;
  }

  /** Opens a session; the returned token goes in the cookie and is never stored. */
  async startSession(user: AccountUser, now = new Date()): Promise<{ token: string; session: DashboardSession }> {
    const token = randomBytes(32).toString('base64url');
    const session = this.em.create(DashboardSession, {
      id: sha256(token),
      user,
      csrfToken: randomBytes(24).toString('base64url'),
      createdAt: now,
      lastSeenAt: now,
      expiresAt: new Date(now.getTime() + this.sessions.maxMs),
    });
    await this.em.flush();
    return { token, session };
  }

  /** The live session of a cookie's token (its user and account loaded), or null; an ended one is deleted. */
  async session(token: string, now = new Date()): Promise<DashboardSession | null> {
    if (!token || token.length > 128) return null;
    const session = await this.em.findOne(DashboardSession, { id: sha256(token) }, { populate: ['user', 'user.account'] });
    if (!session) return null;
    if (session.expiresAt <= now || session.lastSeenAt.getTime() + this.sessions.idleMs <= now.getTime()) {
      await this.em.nativeDelete(DashboardSession, { id: session.id });
      return null;
    }
    if (now.getTime() - session.lastSeenAt.getTime() >= TOUCH_EVERY_MS) {
      session.lastSeenAt = now;
      await this.em.nativeUpdate(DashboardSession, { id: session.id }, { lastSeenAt: now });
    }
    return session;
  }

  /** Deletes every ended session (idle or past its end); sign-ins call it, so the table keeps only live ones. */
  sweepSessions(now = new Date()): Promise<number> {
    return this.em.nativeDelete(DashboardSession, { $or: [{ expiresAt: { $lte: now } }, { lastSeenAt: { $lte: new Date(now.getTime() - this.sessions.idleMs) } }] });
  }

  async endSession(token: string): Promise<void> {
    await this.em.nativeDelete(DashboardSession, { id: sha256(token) });
  }

  /** Sign-out everywhere: every session of the user, on every instance (each request reads its session). */
  async endAllSessions(userId: string): Promise<number> {
    return this.em.nativeDelete(DashboardSession, { user: userId });
  }

  /** Whether the session with this token hash is still live, for open websockets' periodic checks. */
  async liveSessionIds(ids: readonly string[], now = new Date()): Promise<Set<string>> {
    if (!ids.length) return new Set();
    const rows = await this.em.find(DashboardSession, { id: { $in: [...new Set(ids)] }, expiresAt: { $gt: now }, lastSeenAt: { $gt: new Date(now.getTime() - this.sessions.idleMs) } });
    return new Set(rows.map((row) => row.id));
  }

  async users(accountId: string): Promise<UserView[]> {
    const users = await this.em.find(AccountUser, { account: accountId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
    return users.map(userView);
  }

  async invitations(accountId: string): Promise<InvitationView[]> {
    const invitations = await this.em.find(DashboardInvitation, { account: accountId }, { orderBy: { createdAt: 'desc', id: 'asc' } });
    return invitations.map(invitationView);
  }

  /** An owner's invitation; the token (in the link) is returned once and only its hash kept. */
  async invite(input: { inviter: AccountUser; email: string; role: string }, now = new Date()): Promise<{ invitation: InvitationView; token: string }> {
    const email = normalEmail(input.email);
    const role = checkRole(input.role);
    if (await this.em.count(AccountUser, { email })) throw this.userExists(email);
    const token = 'inv_' + randomBytes(24).toString('base64url');
    const invitation = this.em.create(DashboardInvitation, {
      account: input.inviter.account,
      email,
      role,
      tokenHash: sha256(token),
      inviter: input.inviter,
      createdAt: now,
      expiresAt: new Date(now.getTime() + INVITATION_TTL_MS),
      acceptedAt: null,
    });
    await this.em.flush();
    return { invitation: invitationView(invitation), token };
  }

  /** Turns an invitation into a user, once: the row is locked, so two acceptances cannot both pass. */
  async acceptInvitation(input: { token: string; name: string; password: string }, now = new Date()): Promise<AccountUser> {
    const name = checkName(input.name);
    checkPassword(input.password);
    const passwordHash = await hashPassword(input.password);
    return this.em.transactional(async (em) => {
      const invitation = await em.findOne(DashboardInvitation, { tokenHash: sha256(input.token) }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!invitation || invitation.acceptedAt) throw new AccountUserError('NOT_FOUND', 404, 'invitation_not_found', 'This invitation does not exist or has been used');
      if (invitation.expiresAt <= now) throw new AccountUserError('BAD_USER_INPUT', 410, 'invitation_expired', 'This invitation has expired; ask for a new one');
      if (await em.count(AccountUser, { email: invitation.email })) throw this.userExists(invitation.email);
      invitation.acceptedAt = now;
      const user = em.create(AccountUser, {
        account: invitation.account,
        email: invitation.email,
        name,
        passwordHash,
        role: invitation.role,
        platformAdmin: false,
        createdAt: now,
      });
      await em.flush();
      await em.populate(user, ['account']);
      return user;
    });
  }

  /** Active live and test keys of the account, for the key cap shown in the dashboard. */
  activeKeys(accountId: string, now = new Date()): Promise<number> {
    return this.em.count(ApiKey, {
      account: accountId,
      kind: { $in: ['live', 'test'] },
      disabledAt: null,
      $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }],
    });
  }

  private userExists(email: string): AccountUserError {
    return new AccountUserError('CONFLICT', 409, 'user_exists', `A user with the email ${email} already exists`);
  }

  /** Flushes; two concurrent creations of one email meet the unique constraint: a conflict, not a 500. */
  private async flushOrConflict(email: string): Promise<void> {
    try {
      await this.em.flush();
    } catch (error) {
      if ((error as { code?: string }).code === '23505' || (error as Error).name === 'UniqueConstraintViolationException') throw this.userExists(email);
      throw error;
    }
  }
}
