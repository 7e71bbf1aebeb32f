//! Protected-path globs (SPEC 5) with the reference's semantics: a JS regex
//! without the `u` flag, so `?` and `*` step over UTF-16 code units and `.`
//! stops at line terminators. The regex crate matches code points, not
//! UTF-16 units, so this is a small matcher over units. The JS oracle's copy
//! is `globToRegExp` in js/pure/rules.js.

use crate::json::text::to_units;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Unit(u16),
    /// `?`: one unit other than `/`.
    OneNotSlash,
    /// `*`: a run of units other than `/`.
    RunNotSlash,
    /// `**` not followed by `/`: any run without line terminators.
    RunAny,
    /// `**/`: zero or more whole directories, `(?:[^/]*/)*`.
    Dirs,
}

#[derive(Debug, Clone)]
pub struct Glob {
    toks: Vec<Tok>,
}

const STAR: u16 = b'*' as u16;
const SLASH: u16 = b'/' as u16;
const QUESTION: u16 = b'?' as u16;

fn is_line_terminator(u: u16) -> bool {
    matches!(u, 0x0a | 0x0d | 0x2028 | 0x2029)
}

impl Glob {
    /// A glob from the canonical text of its pattern.
    pub fn new(pattern: &[u8]) -> Self {
        let units = to_units(pattern);
        let mut toks = Vec::new();
        let mut rest = &units[..];
        while let [u, ..] = rest {
            let (tok, len) = match rest {
                [STAR, STAR, SLASH, ..] => (Tok::Dirs, 3),
                [STAR, STAR, ..] => (Tok::RunAny, 2),
                [STAR, ..] => (Tok::RunNotSlash, 1),
                [QUESTION, ..] => (Tok::OneNotSlash, 1),
                _ => (Tok::Unit(*u), 1),
            };
            toks.push(tok);
            rest = &rest[len..];
        }
        Self { toks }
    }

    /// Whole-string match over UTF-16 units (dynamic programming, no
    /// backtracking blow-up).
    pub fn matches(&self, t: &[u16]) -> bool {
        let n = t.len();
        // ok[j]: the tokens so far can match exactly t[..j].
        let mut ok = vec![false; n + 1];
        ok[0] = true;
        for tok in &self.toks {
            let mut next = vec![false; n + 1];
            match tok {
                Tok::Unit(u) => {
                    for j in 0..n {
                        next[j + 1] = ok[j] && t[j] == *u;
                    }
                }
                Tok::OneNotSlash => {
                    for j in 0..n {
                        next[j + 1] = ok[j] && t[j] != SLASH;
                    }
                }
                Tok::RunNotSlash => run(&ok, &mut next, t, |u| u != SLASH),
                Tok::RunAny => run(&ok, &mut next, t, |u| !is_line_terminator(u)),
                Tok::Dirs => {
                    // `(?:[^/]*/)*`: nothing, or any run (line terminators
                    // included) that ends with a slash.
                    let mut any = vec![false; n + 1];
                    run(&ok, &mut any, t, |_| true);
                    for j in 0..=n {
                        next[j] = ok[j] || (j > 0 && any[j - 1] && t[j - 1] == SLASH);
                    }
                }
            }
            ok = next;
        }
        ok[n]
    }
}

/// Closure of `ok` under "consume one more unit satisfying `allowed`".
fn run(ok: &[bool], next: &mut [bool], t: &[u16], allowed: impl Fn(u16) -> bool) {
    let mut live = false;
    for j in 0..ok.len() {
        live = ok[j] || (live && j > 0 && allowed(t[j - 1]));
        next[j] = live;
    }
}

#[cfg(test)]
mod tests {
    use super::Glob;

    fn m(p: &str, t: &str) -> bool {
        let units: Vec<u16> = t.encode_utf16().collect();
        Glob::new(crate::json::text::text_of(p).as_slice()).matches(&units)
    }

    #[test]
    fn anchored_globs() {
        assert!(m("**/skills/**/*.md", "a/b/skills/x/y/z.md"));
        assert!(m("**/skills/**/*.md", "skills/z.md"));
        assert!(!m("**/skills/**/*.md", "skills/z.mdx"));
        assert!(m("src/*.ts", "src/a.ts"));
        assert!(!m("src/*.ts", "src/a/b.ts"));
        assert!(m("src/?.ts", "src/a.ts"));
        assert!(!m("src/?.ts", "src/ab.ts"));
        assert!(m("a**b", "a/x/yb"));
        assert!(m("*.(ts)", "x.(ts)"));
        assert!(!m("*.ts", "x_ts"));
        assert!(m("[ab]", "[ab]"));
    }

    #[test]
    fn utf16_units_and_line_terminators() {
        assert!(!m("?", "😀"));
        assert!(m("??", "😀"));
        assert!(m("*", "😀"));
        assert!(m("é?", "éx"));
        assert!(!m("a**b", "a\nb"));
        assert!(m("a*b", "a\nb"));
        assert!(m("a?b", "a\u{2028}b"));
        assert!(!m("*.ts", "a.ts\n"));
        assert!(m("**/x", "a\n/x"));
    }
}
