/**
 * What the chat's per-event checks read of subscribers, kept between events under the version of
 * `membership.chat_access_version` it was read at (Migration20261124210000ChatAccessVersion):
 * triggers bump that counter in the transaction of every change to a member's archival or scope
 * and to channel memberships. Rows read in one statement with the counter are labelled with it;
 * a later check that reads the counter unchanged may answer from them, since any change committed
 * in between would have bumped it. So a check still sees every change committed before it, and a
 * channel of a thousand subscribers costs one one-row read per event instead of reading a
 * thousand members and memberships.
 *
 * One per database (the platform's instances share it through the counter, not through memory).
 */
export class ChatAccessCache<Member> {
  private version: bigint | null = null;
  /** Members found, by scope and id; a member not found is never kept (it is read again). */
  private readonly members = new Map<string, Member>();
  /** Per channel, each member asked about: in it or not (both kept: absence is a verdict too). */
  private readonly memberships = new Map<string, Map<string, boolean>>();
  private entries = 0;

  constructor(private readonly maxEntries = 200_000) {}

  /** Whether what is kept was read at `version`, the counter a check read just now. */
  isAt(version: bigint): boolean {
    return this.version === version;
  }

  member(key: string): Member | undefined {
    return this.members.get(key);
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
    for (const [key, row] of rows) {
      if (!this.members.has(key)) this.entries += 1;
      this.members.set(key, row);
    }
    return true;
  }

  keepMemberships(version: bigint, channelId: string, answers: Iterable<[string, boolean]>): boolean {
    if (!this.accept(version)) return false;
    let channel = this.memberships.get(channelId);
    if (!channel) this.memberships.set(channelId, (channel = new Map()));
    for (const [memberId, inChannel] of answers) {
      if (!channel.has(memberId)) this.entries += 1;
      channel.set(memberId, inChannel);
    }
    return true;
  }

  private accept(version: bigint): boolean {
    if (this.version === null || version > this.version) {
      this.clear();
      this.version = version;
    }
    if (version !== this.version) return false;
    // A bound, not an eviction policy: past it everything is read again once.
    if (this.entries > this.maxEntries) this.clear();
    return true;
  }

  private clear(): void {
    this.members.clear();
    this.memberships.clear();
    this.entries = 0;
  }
}
