/**
 * Turns a concrete REST path into its route pattern (`/members/abc` -> `/members/:id`), so usage
 * is counted per route and the number of distinct paths stays bounded. Patterns are tried in the
 * order given (the bridge's own order, where literal segments come before `:id`); a path no
 * pattern matches has its id-like segments replaced. Answers are memoised, boundedly.
 */
export class PathTemplates {
  private readonly patterns: { template: string; regex: RegExp }[];
  private readonly memo = new Map<string, string>();

  constructor(
    private readonly base: string,
    templates: readonly string[],
    private readonly maxMemo = 10_000,
  ) {
    this.patterns = [...new Set(templates)].map((template) => ({
      template,
      regex: new RegExp(`^${template.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z_]\w*/g, '[^/]+')}/?$`),
    }));
  }

  /** The pattern of `path` (the full path, base included), base included. */
  of(path: string): string {
    const known = this.memo.get(path);
    if (known !== undefined) return known;
    const below = path.slice(this.base.length) || '/';
    const match = this.patterns.find((pattern) => pattern.regex.test(below));
    const template = (this.base + (match ? match.template : genericTemplate(below))).slice(0, 200);
    if (this.memo.size >= this.maxMemo) this.memo.clear();
    this.memo.set(path, template);
    return template;
  }
}

/** Segments with a digit, or long ones, are ids. */
function genericTemplate(path: string): string {
  return path
    .split('/')
    .map((segment) => (/\d/.test(segment) || segment.length > 24 ? ':id' : segment))
    .join('/');
}
