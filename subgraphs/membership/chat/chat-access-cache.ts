/**
 * What the chat's per-event checks read of subscribers, kept between events under the version of
 * their scope's `membership.chat_access_version` counter it was read at
 * (Migration20261124210000ChatAccessVersion): triggers bump a scope's counter in the transaction
 * of every change to a member's archival or scope and to its channels' memberships. Rows read in
 * one statement with the counter are labelled with it; a later check that reads the counter
 * unchanged may answer from them, since any change committed in between would have bumped it. So
 * a check still sees every change committed before it, and a channel of a thousand subscribers
 * costs one one-row read per event instead of a thousand members and memberships.
 *
 * One set per ORM (the platform's instances share the counters through the database, not memory),
 * one cache per account and mode in it: counters of different scopes are unrelated numbers.
 */
export class ChatAccessCaches<Member> {
  private readonly scopes = new Map<string, ChatAccessCache<Member>>();
  /** Rows kept over all scopes. */
  entries = 0;

  constructor(readonly maxEntries = 200_000) {}

  of(accountId: string, mode: string): ChatAccessCache<Member> {
    const key = `${accountId}|${mode}`;
    let cache = this.scopes.get(key);
    if (!cache) this.scopes.set(key, (cache = new ChatAccessCache(this)));
    return cache;
  }

  /** A bound, not an eviction policy: past it every scope's rows go, and are read again once. */
  clear(): void {
    for (const cache of this.scopes.values()) cache.letGo();
    this.scopes.clear();
  }
}

/** One scope's kept rows, and the counter value they were read at. */
export class ChatAccessCache<Member> {
  private version: bigint | null = null;
  /** Members found, by id; a member not found is never kept (it is read again). */
  private readonly members = new Map<string, Member>();
  /** Per channel, each member asked about: in it or not (both kept: absence is a verdict too). */
  private readonly memberships = new Map<string, Map<string, boolean>>();
  private size = 0;
  /** Let go by its set: checks still holding it answer from their own reads, and keep nothing. */
  private released = false;

  constructor(private readonly all: ChatAccessCaches<Member>) {}

  /** Whether what is kept was read at `version`, the counter a check read just now. */
  isAt(version: bigint): boolean {
    return this.version === version;
  }

  member(id: string): Member | undefined {
    return this.members.get(id);
  }

  membership(channelId: string, memberId: string): boolean | undefined {
    return this.memberships.get(channelId)?.get(memberId);
  }

  /**
   * Keeps rows read at `version` when nothing kept is older: a later version drops everything
   * kept first; rows older than what is kept are not kept (the caller still answers from them,
   * as a check that read them then). Returns whether they were kept.
   */
  keepMembers(version: bigint, rows: Iterable<[string, Member]>): boolean {
    if (!this.accept(version)) return false;
    for (const [id, row] of rows) {
      if (!this.members.has(id)) this.grew();
      this.members.set(id, row);
    }
    return true;
  }

  keepMemberships(version: bigint, channelId: string, answers: Iterable<[string, boolean]>): boolean {
    if (!this.accept(version)) return false;
    let channel = this.memberships.get(channelId);
    if (!channel) this.memberships.set(channelId, (channel = new Map()));
    for (const [memberId, inChannel] of answers) {
      if (!channel.has(memberId)) this.grew();
      channel.set(memberId, inChannel);
    }
    return true;
  }

  clearRows(): void {
    this.members.clear();
    this.memberships.clear();
    this.all.entries -= this.size;
    this.size = 0;
  }

  letGo(): void {
    this.clearRows();
    this.released = true;
  }

  private grew(): void {
    this.size += 1;
    this.all.entries += 1;
  }

  private accept(version: bigint): boolean {
    if (this.released) return false;
    if (this.version === null || version > this.version) {
      this.clearRows();
      this.version = version;
    }
    if (version !== this.version) return false;
    if (this.all.entries > this.all.maxEntries) {
      this.all.clear();
      return false;
    }
    return true;
  }
}
