/**
 * A string that matches a field's `pattern`, for documents: walks the common regex forms (anchors, literals,
 * `\d \w \s`, classes, groups with `|`, quantifiers) taking the first choice and the fewest repeats. Undefined for
 * what it cannot read (lookarounds, back-references) or when its result does not match after all.
 */
export const patternExample = (pattern: string): string | undefined => {
  let at = 0;
  const classChar = (body: string): string | undefined => {
    const set = new RegExp(`^[${body}]$`);
    return [body.charAt(0), 'a', 'x', 'A', 'X', '0', '1', '-', '_', '.', ' '].find((c) => set.test(c));
  };
  const atom = (): string | undefined => {
    const c = pattern[at];
    if (c === '\\') {
      const e = pattern[at + 1];
      at += 2;
      return e === 'd' ? '1' : e === 'w' ? 'a' : e === 's' ? ' ' : /[A-Za-z0-9]/.test(e ?? '') ? undefined : e;
    }
    if (c === '[') {
      const end = pattern.indexOf(']', at + 2);
      if (end < 0) return undefined;
      const body = pattern.slice(at + 1, end);
      at = end + 1;
      return classChar(body);
    }
    if (c === '(') {
      if (pattern[at + 1] === '?' && pattern[at + 2] !== ':') return undefined;
      at += pattern[at + 1] === '?' ? 3 : 1;
      const inner = sequence();
      while (at < pattern.length && pattern[at] !== ')') at++; // the other alternatives
      at++;
      return inner;
    }
    if (c === '.') {
      at++;
      return 'a';
    }
    at++;
    return c;
  };
  const sequence = (): string | undefined => {
    let out = '';
    while (at < pattern.length && pattern[at] !== '|' && pattern[at] !== ')') {
      if (pattern[at] === '^' || pattern[at] === '$') {
        at++;
        continue;
      }
      const one = atom();
      if (one === undefined) return undefined;
      const q = /^(\{(\d+)(,\d*)?\}|\?|\*|\+)\??/.exec(pattern.slice(at));
      const times = !q ? 1 : q[2] !== undefined ? Number(q[2]) : q[1] === '+' ? 1 : 0;
      at += q?.[0].length ?? 0;
      out += one.repeat(times);
    }
    return out;
  };
  const text = sequence();
  try {
    return text !== undefined && new RegExp(pattern).test(text) ? text : undefined;
  } catch {
    return undefined;
  }
};
