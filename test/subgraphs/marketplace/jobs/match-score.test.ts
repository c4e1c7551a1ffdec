import { describe, expect, it } from 'vitest';
import { explainMatch, locationFit, normalizeSkills, pgArrayLiteral, rawScore, skillCoverage, textRelevance } from '../../../../subgraphs/shared/match-score.js';

describe('the job match score', () => {
  it('normalises skills: trimmed, lower-case, inner spaces collapsed, no blanks or duplicates', () => {
    expect(normalizeSkills([' TypeScript', 'typescript ', 'Machine   Learning', '', '  ', 'SQL'])).toEqual(['typescript', 'machine learning', 'sql']);
    expect(normalizeSkills(null)).toEqual([]);
  });

  it('weighs skills 60, text 30 and location 10, and explains each part', () => {
    const match = explainMatch({ requiredSkills: ['TypeScript', 'SQL', 'Kafka', 'Go'], candidateSkills: ['sql', 'typescript', 'react'], textRank: 0.05, postingLocation: 'Leeds', remote: false, candidateLocation: 'Leeds, GB' });
    expect(match).toEqual({
      score: 55,
      components: { skills: 30, text: 15, location: 10 },
      matchedSkills: ['typescript', 'sql'],
      missingSkills: ['kafka', 'go'],
      reasons: ['Has 2 of 4 skills asked for: typescript, sql', 'Missing: kafka, go', 'Profile and posting share some terms', 'Located in Leeds'],
    });
  });

  it('gives full text points from a rank of 0.1 up, and none for no shared term', () => {
    expect(textRelevance(0.2)).toBe(1);
    expect(textRelevance(0.1)).toBe(1);
    expect(textRelevance(0)).toBe(0);
    expect(textRelevance(Number.NaN)).toBe(0);
    expect(explainMatch({ requiredSkills: ['a'], candidateSkills: [], textRank: 0, postingLocation: null, remote: true, candidateLocation: null }).reasons).toContain('Profile and posting share no terms');
  });

  it('fits any location for a remote role, the same place, half when unknown, none elsewhere', () => {
    expect(locationFit('Berlin', true, 'Lisbon')).toBe(1);
    expect(locationFit('Berlin', false, 'Berlin, DE')).toBe(1);
    expect(locationFit('Berlin', false, null)).toBe(0.5);
    expect(locationFit(null, false, 'Berlin')).toBe(0.5);
    expect(locationFit('Berlin', false, 'Munich, DE')).toBe(0);
  });

  it('gives no skill points to a posting that asks for none, and says so', () => {
    expect(skillCoverage([], ['sql'])).toBe(0);
    const match = explainMatch({ requiredSkills: [], candidateSkills: ['sql'], textRank: 0, postingLocation: 'X', remote: false, candidateLocation: 'Y' });
    expect(match).toMatchObject({ score: 0, matchedSkills: [], missingSkills: [], reasons: ['The posting lists no skills', 'Profile and posting share no terms', 'Located in Y, the role is in X'] });
  });

  it('scores within 0-100 and rounds the sum rawScore gives', () => {
    const input = { requiredSkills: ['a', 'b', 'c'], candidateSkills: ['a', 'b', 'c'], textRank: 1, postingLocation: null, remote: true, candidateLocation: null };
    expect(rawScore(input)).toBe(100);
    expect(explainMatch(input).score).toBe(100);
    const partial = { ...input, candidateSkills: ['a'], textRank: 0.033 };
    expect(explainMatch(partial).score).toBe(Math.round(rawScore(partial)));
  });

  it('writes PostgreSQL array literals that survive quotes and backslashes', () => {
    expect(pgArrayLiteral(['c#', 'say "hi"', 'back\\slash', 'a,b'])).toBe('{"c#","say \\"hi\\"","back\\\\slash","a,b"}');
    expect(pgArrayLiteral([])).toBe('{}');
  });
});
