/**
 * The one definition of a job match's score, used by the marketplace (postings ranked for a
 * member) and by membership (members ranked for a posting), so both directions weigh and explain
 * a match alike. No database access: each side ranks in SQL with these weights (MATCH_WEIGHTS,
 * TEXT_RANK_SATURATION, locationFit's rules mirrored in SQL) and explains the rows it returns here.
 */

/** Points out of 100 each component can give. */
export const MATCH_WEIGHTS = { skills: 60, text: 30, location: 10 } as const;

/**
 * PostgreSQL's ts_rank (normalisation 0) of a short profile against a posting rarely exceeds 0.1;
 * ranks at or above this count as a full text match.
 */
export const TEXT_RANK_SATURATION = 0.1;

/** Location fit when one side has no location: neither a match nor a mismatch. */
export const UNKNOWN_LOCATION_FIT = 0.5;

/** A skill as stored and compared: trimmed, lower-case, inner whitespace collapsed. */
export function normalizeSkill(skill: string): string {
  return skill.trim().toLowerCase().replace(/\s+/g, ' ');
}

/** Skills normalised, without blanks and duplicates, in first-seen order. */
export function normalizeSkills(skills: readonly string[] | null | undefined): string[] {
  return [...new Set((skills ?? []).map(normalizeSkill).filter((skill) => skill.length > 0))];
}

export interface MatchInput {
  /** The posting's skills (what is asked for). */
  requiredSkills: readonly string[];
  /** The candidate's skills (what is offered). */
  candidateSkills: readonly string[];
  /** ts_rank of the candidate's profile against the posting (or the reverse), as PostgreSQL computed it. */
  textRank: number;
  postingLocation: string | null | undefined;
  remote: boolean;
  candidateLocation: string | null | undefined;
}

export interface MatchComponents {
  /** 0-60: share of the posting's skills the candidate has. */
  skills: number;
  /** 0-30: full-text relevance of profile and posting. */
  text: number;
  /** 0-10: remote, same place, or unknown. */
  location: number;
}

export interface MatchExplanation {
  /** 0-100, the sum of the components, rounded. */
  score: number;
  components: MatchComponents;
  matchedSkills: string[];
  missingSkills: string[];
  reasons: string[];
}

const round1 = (value: number) => Math.round(value * 10) / 10;

function sameLocation(a: string, b: string): boolean {
  const x = a.trim().toLowerCase();
  const y = b.trim().toLowerCase();
  return x.length > 0 && y.length > 0 && (x.includes(y) || y.includes(x));
}

/** 1 for a remote posting or the same place (one name containing the other), 0.5 when unknown, else 0. */
export function locationFit(posting: string | null | undefined, remote: boolean, candidate: string | null | undefined): number {
  if (remote) return 1;
  if (!posting?.trim() || !candidate?.trim()) return UNKNOWN_LOCATION_FIT;
  return sameLocation(posting, candidate) ? 1 : 0;
}

/** Share of the required skills covered; a posting that asks for none gives no skill points. */
export function skillCoverage(required: readonly string[], candidate: readonly string[]): number {
  const asked = normalizeSkills(required);
  if (asked.length === 0) return 0;
  const offered = new Set(normalizeSkills(candidate));
  return asked.filter((skill) => offered.has(skill)).length / asked.length;
}

/** Text relevance in 0..1 from a ts_rank. */
export function textRelevance(rank: number): number {
  if (!Number.isFinite(rank) || rank <= 0) return 0;
  return Math.min(1, rank / TEXT_RANK_SATURATION);
}

/** The unrounded score the SQL ranking orders by (same formula as `explainMatch`). */
export function rawScore(input: MatchInput): number {
  return (
    MATCH_WEIGHTS.skills * skillCoverage(input.requiredSkills, input.candidateSkills) +
    MATCH_WEIGHTS.text * textRelevance(input.textRank) +
    MATCH_WEIGHTS.location * locationFit(input.postingLocation, input.remote, input.candidateLocation)
  );
}

/** The score of one match with its components, matched and missing skills, and reasons a person can read. */
export function explainMatch(input: MatchInput): MatchExplanation {
  const asked = normalizeSkills(input.requiredSkills);
  const offered = new Set(normalizeSkills(input.candidateSkills));
  const matchedSkills = asked.filter((skill) => offered.has(skill));
  const missingSkills = asked.filter((skill) => !offered.has(skill));
  const coverage = asked.length ? matchedSkills.length / asked.length : 0;
  const text = textRelevance(input.textRank);
  const fit = locationFit(input.postingLocation, input.remote, input.candidateLocation);
  const components: MatchComponents = {
    skills: round1(MATCH_WEIGHTS.skills * coverage),
    text: round1(MATCH_WEIGHTS.text * text),
    location: round1(MATCH_WEIGHTS.location * fit),
  };
  const reasons: string[] = [];
  if (asked.length === 0) reasons.push('The posting lists no skills');
  else if (matchedSkills.length === 0) reasons.push(`Has none of the ${asked.length} skills asked for`);
  else reasons.push(`Has ${matchedSkills.length} of ${asked.length} skills asked for: ${matchedSkills.join(', ')}`);
  if (missingSkills.length) reasons.push(`Missing: ${missingSkills.join(', ')}`);
  if (text >= 0.66) reasons.push('Profile and posting describe closely related work');
  else if (text > 0) reasons.push('Profile and posting share some terms');
  else reasons.push('Profile and posting share no terms');
  if (input.remote) reasons.push('The role is remote');
  else if (fit === 1) reasons.push(`Located in ${input.postingLocation}`);
  else if (fit === 0) reasons.push(`Located in ${input.candidateLocation}, the role is in ${input.postingLocation}`);
  else reasons.push('Location unknown on one side');
  const score = Math.round(coverage * MATCH_WEIGHTS.skills + text * MATCH_WEIGHTS.text + fit * MATCH_WEIGHTS.location);
  return { score, components, matchedSkills, missingSkills, reasons };
}

/**
 * The SQL of the score without its text part: skill coverage and location fit, which are cheap.
 * `required` is an expression of the posting's skills (text[]), `offered` of the candidate's, `fit`
 * of location fit (see `locationFitSql`).
 */
export function baseScoreSql(e: { required: string; offered: string; fit: string }): string {
  return (
    `(case when cardinality(${e.required}) = 0 then 0 else ${MATCH_WEIGHTS.skills}.0 * ` +
    `(select count(*) from unnest(${e.required}) r where r = any(${e.offered}))::float8 / cardinality(${e.required}) end` +
    ` + ${MATCH_WEIGHTS.location}.0 * ${e.fit})`
  );
}

/** The SQL of the text part of the score from a ts_rank expression `rank`. */
export function textScoreSql(rank: string): string {
  return `(${MATCH_WEIGHTS.text}.0 * least(1.0, greatest(0.0, ${rank}) / ${TEXT_RANK_SATURATION}))`;
}

/** The SQL of the whole score (same formula as `rawScore`). */
export function scoreSql(e: { required: string; offered: string; rank: string; fit: string }): string {
  return `(${baseScoreSql(e)} + ${textScoreSql(e.rank)})`;
}

/**
 * Ranks rows in one statement, computing the costly text rank only where it can matter: `cheap`
 * (a CTE of the prefiltered rows with `id`, `base` = baseScoreSql and whatever `rankSql` reads) is
 * cut to the rows whose base plus the most text can give reaches the `n`-th best base, where `n`
 * is the rows wanted (limit + 1 + offset, the last parameter before limit and offset). A row below
 * that bar scores less than `n` rows at least, so the cut changes no ranking.
 */
export function prunedRankingSql(rankSql: string): string {
  return `bar as (
  select coalesce(min(base), 0) as floor from (select base from cheap order by base desc limit ?) top
), ranked as (
  select cheap."id", cheap.base, ${rankSql} as rank from cheap, q, bar where cheap.base + ${MATCH_WEIGHTS.text} >= bar.floor
)
select "id", rank, base + ${textScoreSql('rank')} as score
from ranked
order by score desc, "id"
limit ? offset ?`;
}

/** `locationFit` in SQL over a posting location, a remote flag and a candidate location (text expressions). */
export function locationFitSql(e: { posting: string; remote: string; candidate: string }): string {
  const p = `lower(btrim(coalesce(${e.posting}, '')))`;
  const c = `lower(btrim(coalesce(${e.candidate}, '')))`;
  return (
    `(case when ${e.remote} then 1.0 when ${p} = '' or ${c} = '' then ${UNKNOWN_LOCATION_FIT} ` +
    `when strpos(${p}, ${c}) > 0 or strpos(${c}, ${p}) > 0 then 1.0 else 0.0 end)`
  );
}

/**
 * A tsquery matching any word of the text expression `text` (plainto_tsquery ANDs them; a profile
 * rarely contains every word of a posting, so ranking needs OR).
 */
export function anyTermQuerySql(text: string): string {
  return `replace(plainto_tsquery('english', ${text})::text, ' & ', ' | ')::tsquery`;
}

/**
 * A PostgreSQL array literal of `values` (for a `?::text[]` parameter): the query runner would
 * otherwise expand a JavaScript array into a list of parameters.
 */
export function pgArrayLiteral(values: readonly string[]): string {
  return `{${values.map((value) => `"${value.replace(/["\\]/g, (c) => `\\${c}`)}"`).join(',')}}`;
}
