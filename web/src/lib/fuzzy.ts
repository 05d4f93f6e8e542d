// Subsequence matching for the palette: every query character in order; earlier, tighter matches
// score higher. Returns null when the text does not match.

export function fuzzyScore(text: string, query: string): number | null {
  const t = text.toLowerCase();
  const q = query.toLowerCase().trim();
  if (q === "") return 0;
  const direct = t.indexOf(q);
  if (direct >= 0) return 1000 - direct;
  let score = 0;
  let ti = 0;
  let last = -1;
  for (const ch of q) {
    if (ch === " ") continue;
    const found = t.indexOf(ch, ti);
    if (found < 0) return null;
    score += found === last + 1 ? 5 : 1;
    last = found;
    ti = found + 1;
  }
  return score;
}
