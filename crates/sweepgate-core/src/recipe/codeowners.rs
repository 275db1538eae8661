//! `.github/CODEOWNERS`: GitHub's rules, not gitignore's.
//!
//! * patterns are gitignore-like, but `!` negation and `[ ]` ranges are
//!   invalid (the line is skipped, as GitHub does, and reported);
//! * a `/` anywhere but at the end anchors the pattern to the root; without
//!   one the pattern matches at any depth; a trailing `/` matches only inside
//!   that directory; `*` never crosses `/`, `**` does;
//! * a final literal segment also names a directory (everything beneath it
//!   matches), a final wildcard segment does not (`docs/*` leaves
//!   `docs/a/b.md` alone);
//! * the last matching line wins, and a matching line without owners makes
//!   the path deliberately unowned, which is not the same as unmatched.
//!
//! Matching is built on `globset` with `literal_separator(true)`.

use std::borrow::Cow;
use std::fmt;

use globset::{GlobBuilder, GlobMatcher};

use super::{Loc, ParseError};

/// An owner named on a CODEOWNERS line.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Owner {
    /// `@login`
    User(String),
    /// `@org/team`
    Team { org: String, team: String },
    /// `someone@example.com`
    Email(String),
}

impl Owner {
    /// Reads one owner token; `None` when GitHub would not accept it.
    pub fn parse(token: &str) -> Option<Owner> {
        if let Some(rest) = token.strip_prefix('@') {
            return match rest.split_once('/') {
                Some((org, team)) if is_login(org) && is_slug(team) => Some(Owner::Team {
                    org: org.to_owned(),
                    team: team.to_owned(),
                }),
                Some(_) => None,
                None if is_login(rest) => Some(Owner::User(rest.to_owned())),
                None => None,
            };
        }
        let (local, domain) = token.split_once('@')?;
        if local.is_empty() || !domain.contains('.') || domain.starts_with('.') {
            return None;
        }
        Some(Owner::Email(token.to_owned()))
    }

    /// The login for a user owner.
    pub(crate) fn login(&self) -> Option<&str> {
        match self {
            Owner::User(u) => Some(u),
            _ => None,
        }
    }

    /// `(org, team)` for a team owner.
    pub fn team(&self) -> Option<(&str, &str)> {
        match self {
            Owner::Team { org, team } => Some((org, team)),
            _ => None,
        }
    }
}

impl fmt::Display for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Owner::User(u) => write!(f, "@{u}"),
            Owner::Team { org, team } => write!(f, "@{org}/{team}"),
            Owner::Email(e) => f.write_str(e),
        }
    }
}

fn is_login(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 39
        && !s.starts_with('-')
        && !s.ends_with('-')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

fn is_slug(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Why a line was skipped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    #[error("empty pattern")]
    EmptyPattern,
    #[error("`!` negation is not supported in CODEOWNERS")]
    Negation,
    #[error("`[ ]` character ranges are not supported in CODEOWNERS")]
    CharacterRange,
    #[error("`{0}` is not a valid owner")]
    BadOwner(String),
    #[error("pattern cannot be compiled: {0}")]
    Glob(String),
}

/// A skipped line, kept so a lint can point at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidLine {
    pub loc: Loc,
    pub text: String,
    pub error: LineError,
}

/// One valid CODEOWNERS rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The pattern exactly as written.
    pub pattern: String,
    pub owners: Vec<Owner>,
    /// 1-based line in the file.
    pub line: usize,
    /// Tied to the repository root.
    pub anchored: bool,
    /// Written with a trailing `/`: matches only inside the directory.
    pub dir_only: bool,
    matchers: Vec<GlobMatcher>,
}

impl Rule {
    /// Whether `path` (repository-relative, `/`-separated) matches this rule.
    #[cfg(test)]
    fn matches(&self, path: &str) -> bool {
        match normalize(path) {
            Some(p) => self.matches_normalized(&p),
            None => false,
        }
    }

    fn matches_normalized(&self, path: &str) -> bool {
        self.matchers.iter().any(|m| m.is_match(path))
    }

    /// A rule with no owners: matching paths are deliberately unowned.
    pub(crate) fn is_unowned(&self) -> bool {
        self.owners.is_empty()
    }
}

/// Who owns a path.
#[derive(Debug, Clone, Copy)]
pub enum Ownership<'a> {
    /// The last matching rule names owners.
    Owned(&'a Rule),
    /// The last matching rule names nobody: deliberately unowned.
    Unowned(&'a Rule),
    /// No rule matches.
    Unmatched,
}

impl<'a> Ownership<'a> {
    pub fn rule(&self) -> Option<&'a Rule> {
        match *self {
            Ownership::Owned(r) | Ownership::Unowned(r) => Some(r),
            Ownership::Unmatched => None,
        }
    }

    /// The owners, empty when unowned or unmatched.
    pub fn owners(&self) -> &'a [Owner] {
        match *self {
            Ownership::Owned(r) => &r.owners,
            Ownership::Unowned(_) | Ownership::Unmatched => &[],
        }
    }
}

/// A parsed CODEOWNERS file.
#[derive(Debug, Clone)]
pub struct CodeOwners {
    pub file: String,
    pub rules: Vec<Rule>,
    /// Lines GitHub skips; they never take part in matching.
    pub invalid: Vec<InvalidLine>,
}

impl CodeOwners {
    /// The rule that decides `path`: the last matching one.
    pub fn owner_of(&self, path: &str) -> Ownership<'_> {
        let Some(path) = normalize(path) else {
            return Ownership::Unmatched;
        };
        match self
            .rules
            .iter()
            .rev()
            .find(|r| r.matches_normalized(&path))
        {
            Some(r) if r.is_unowned() => Ownership::Unowned(r),
            Some(r) => Ownership::Owned(r),
            None => Ownership::Unmatched,
        }
    }

    /// The catch-all rule: the last line whose pattern is exactly `*`.
    pub fn catch_all(&self) -> Option<&Rule> {
        self.rules.iter().rev().find(|r| r.pattern == "*")
    }

    /// The core team: the first team named on the catch-all line.
    pub fn core_team(&self) -> Option<&Owner> {
        self.catch_all()?
            .owners
            .iter()
            .find(|o| matches!(o, Owner::Team { .. }))
    }

    /// Whether the rule deciding `path` is the catch-all line, so any
    /// recognised code owner covers it.
    pub fn is_catch_all_path(&self, path: &str) -> bool {
        match (self.owner_of(path).rule(), self.catch_all()) {
            (Some(r), Some(c)) => r.line == c.line,
            _ => false,
        }
    }

    /// Everyone named anywhere in the file, in first-seen order, no repeats.
    pub fn all_owners(&self) -> Vec<&Owner> {
        let mut seen: Vec<&Owner> = Vec::new();
        for o in self.rules.iter().flat_map(|r| r.owners.iter()) {
            if !seen.contains(&o) {
                seen.push(o);
            }
        }
        seen
    }

    /// Whether `login` is named directly (not through a team) anywhere.
    pub fn names_user(&self, login: &str) -> bool {
        self.rules
            .iter()
            .flat_map(|r| r.owners.iter())
            .any(|o| o.login().is_some_and(|l| l.eq_ignore_ascii_case(login)))
    }
}

/// Drops empty segments (`/a//b/` is `a/b`); `None` for an empty path.
fn normalize(path: &str) -> Option<Cow<'_, str>> {
    let clean = !path.starts_with('/') && !path.ends_with('/') && !path.contains("//");
    if clean {
        return (!path.is_empty()).then_some(Cow::Borrowed(path));
    }
    let joined = path
        .split('/')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("/");
    (!joined.is_empty()).then_some(Cow::Owned(joined))
}

/// Parses a CODEOWNERS file. Fails only on bytes that are not UTF-8; bad
/// lines are skipped and listed in `invalid`, as GitHub skips them.
pub fn parse(file: &str, bytes: &[u8]) -> Result<CodeOwners, ParseError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let (line, column) = super::yaml::line_col(bytes, e.valid_up_to());
        ParseError::new(
            Loc::new(file, line, column),
            "CODEOWNERS is not valid UTF-8",
        )
    })?;
    let mut rules = Vec::new();
    let mut invalid = Vec::new();
    for (idx, raw) in text.lines().enumerate() {
        let line = idx + 1;
        let content = raw.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        let column = raw.len() - raw.trim_start().len() + 1;
        match parse_rule(content, line) {
            Ok(rule) => rules.push(rule),
            Err(error) => invalid.push(InvalidLine {
                loc: Loc::new(file, line, column),
                text: content.to_owned(),
                error,
            }),
        }
    }
    Ok(CodeOwners {
        file: file.to_owned(),
        rules,
        invalid,
    })
}

fn parse_rule(content: &str, line: usize) -> Result<Rule, LineError> {
    let mut tokens = content.split_whitespace();
    let pattern = tokens.next().ok_or(LineError::EmptyPattern)?;
    let mut owners = Vec::new();
    for token in tokens {
        owners.push(Owner::parse(token).ok_or_else(|| LineError::BadOwner(token.to_owned()))?);
    }
    let compiled = compile(pattern)?;
    Ok(Rule {
        pattern: pattern.to_owned(),
        owners,
        line,
        anchored: compiled.anchored,
        dir_only: compiled.dir_only,
        matchers: compiled.matchers,
    })
}

struct Compiled {
    anchored: bool,
    dir_only: bool,
    matchers: Vec<GlobMatcher>,
}

/// Translates a CODEOWNERS pattern into one or two globs.
fn compile(raw: &str) -> Result<Compiled, LineError> {
    if raw.starts_with('!') {
        return Err(LineError::Negation);
    }
    if raw.contains('[') || raw.contains(']') {
        return Err(LineError::CharacterRange);
    }
    let dir_only = raw.ends_with('/');
    let body = raw.strip_suffix('/').unwrap_or(raw);
    let anchored = body.contains('/');
    let mut segments: Vec<&str> = body.split('/').filter(|s| !s.is_empty()).collect();
    // `**/**` means the same as `**`; one keeps the translation simple.
    segments.dedup_by(|a, b| *a == "**" && *b == "**");
    let Some(&last) = segments.last() else {
        return Err(LineError::EmptyPattern);
    };

    let mut glob = String::with_capacity(body.len() + 8);
    if !anchored && last != "**" {
        glob.push_str("**/");
    }
    for (i, seg) in segments.iter().enumerate() {
        if i > 0 {
            glob.push('/');
        }
        push_segment(&mut glob, seg);
    }

    let last_is_literal = !last.contains('*') && !last.contains('?');
    let mut globs = Vec::with_capacity(2);
    if dir_only {
        // Only inside the directory, never the directory itself.
        globs.push(format!("{glob}/**"));
    } else if last_is_literal {
        // The name may be a file or a directory with everything beneath it.
        globs.push(format!("{glob}/**"));
        globs.push(glob);
    } else if last == "**" && segments.len() > 1 {
        // `a/**` also matches `a` itself: `**` may consume zero segments.
        let parent = glob.strip_suffix("/**").unwrap_or(&glob).to_owned();
        globs.push(glob);
        globs.push(parent);
    } else {
        globs.push(glob);
    }

    let matchers = globs
        .iter()
        .map(|g| {
            GlobBuilder::new(g)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map(|g| g.compile_matcher())
                .map_err(|e| LineError::Glob(e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Compiled {
        anchored,
        dir_only,
        matchers,
    })
}

/// Copies one path segment into glob syntax: `**` stays recursive, runs of
/// `*` inside a segment collapse to one (same meaning, and globset would
/// otherwise read them as recursive), and glob metacharacters that
/// CODEOWNERS treats literally are escaped.
fn push_segment(out: &mut String, seg: &str) {
    if seg == "**" {
        out.push_str("**");
        return;
    }
    let mut prev_star = false;
    for c in seg.chars() {
        match c {
            '*' if prev_star => continue,
            '*' => out.push('*'),
            '?' => out.push('?'),
            '{' | '}' | '\\' | ',' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
        prev_star = c == '*';
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owners(text: &str) -> CodeOwners {
        parse("CODEOWNERS", text.as_bytes()).unwrap()
    }

    #[test]
    fn github_documented_examples() {
        let co = owners(
            "* @global\n*.js @js\n/build/logs/ @logs\ndocs/* docs@example.com\napps/ @apps\n/apps/github\n",
        );
        assert!(matches!(co.owner_of("README.md"), Ownership::Owned(r) if r.line == 1));
        assert!(matches!(co.owner_of("src/a/b.js"), Ownership::Owned(r) if r.line == 2));
        assert!(matches!(co.owner_of("build/logs/x/y.txt"), Ownership::Owned(r) if r.line == 3));
        assert!(
            matches!(co.owner_of("docs/getting-started.md"), Ownership::Owned(r) if r.line == 4)
        );
        // docs/* does not reach nested files; the catch-all decides.
        assert!(
            matches!(co.owner_of("docs/build-app/troubleshooting.md"), Ownership::Owned(r) if r.line == 1)
        );
        assert!(matches!(co.owner_of("x/apps/y"), Ownership::Owned(r) if r.line == 5));
        assert!(matches!(co.owner_of("apps/github/z"), Ownership::Unowned(r) if r.line == 6));
    }

    #[test]
    fn unmatched_differs_from_unowned() {
        let co = owners("/apps/ @octocat\n/apps/github\n");
        assert!(matches!(co.owner_of("README.md"), Ownership::Unmatched));
        assert!(matches!(
            co.owner_of("apps/github/i.js"),
            Ownership::Unowned(_)
        ));
        assert!(matches!(co.owner_of("apps/main/i.js"), Ownership::Owned(_)));
        // A trailing slash never matches the directory name itself.
        assert!(matches!(co.owner_of("apps"), Ownership::Unmatched));
    }

    #[test]
    fn invalid_lines_are_skipped_and_reported() {
        let co = owners("!x @a\nsrc/[ab].rs @b\nok @bad/\n*.md @c # trailing\n");
        assert_eq!(co.rules.len(), 1);
        assert_eq!(co.rules[0].owners, vec![Owner::User("c".into())]);
        let kinds: Vec<_> = co
            .invalid
            .iter()
            .map(|i| (i.loc.line, i.error.clone()))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (1, LineError::Negation),
                (2, LineError::CharacterRange),
                (3, LineError::BadOwner("@bad/".into()))
            ]
        );
    }

    #[test]
    fn double_star_forms() {
        let co = owners("a/** @x\n**/logs @y\nq/**/z.txt @z\n");
        assert!(co.rules[0].matches("a"));
        assert!(co.rules[0].matches("a/b/c"));
        assert!(co.rules[1].matches("logs"));
        assert!(co.rules[1].matches("deep/logs/file"));
        assert!(co.rules[2].matches("q/z.txt"));
        assert!(co.rules[2].matches("q/1/2/z.txt"));
        assert!(!co.rules[2].matches("z.txt"));
    }

    #[test]
    fn non_utf8_is_a_located_error() {
        let err = parse("CODEOWNERS", b"* @a\nx\xff @b\n").unwrap_err();
        assert_eq!((err.loc.line, err.loc.column), (2, 2));
    }
}
