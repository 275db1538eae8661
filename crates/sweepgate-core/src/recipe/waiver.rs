//! `docs/waiver/<PR>.md`: an engine-patch waiver. The format is the one of
//! `2508.md`: a title naming the PR, then the sections *Config covered*,
//! *What is patched*, *Why the unmodified upstream image cannot run this
//! benchmark*, *Upstream PR / issue links* and *Removal plan*.

use super::{Loc, ParseError};

/// The sections a waiver must have, in order.
pub(crate) const SECTIONS: [&str; 5] = [
    "Config covered",
    "What is patched",
    "Why the unmodified upstream image cannot run this benchmark",
    "Upstream PR / issue links",
    "Removal plan",
];

/// A value with the line it is written on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line<T> {
    pub value: T,
    pub line: usize,
}

/// A row of the *What is patched* table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    pub line: usize,
    /// "vllm #51171", "aiter #4521 …".
    pub upstream: String,
    pub change: String,
    pub notes: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiver {
    pub file: String,
    /// PR number in the title.
    pub pr: u64,
    pub title_line: usize,
    /// PR number in the file name (`2508.md`), if it is one.
    pub file_pr: Option<u64>,
    /// Master-config keys named in *Config covered*.
    pub config_keys: Vec<Line<String>>,
    pub image: Option<Line<String>>,
    pub patch_entrypoint: Option<Line<String>>,
    /// Repository paths linked from the waiver (resolved against its
    /// directory), e.g. the patch script.
    pub linked_paths: Vec<Line<String>>,
    pub patches: Vec<Patch>,
    /// URLs in *Upstream PR / issue links*.
    pub upstream_links: Vec<Line<String>>,
    pub removal_plan: String,
    /// `(title, line)` of each `##` section.
    pub sections: Vec<(String, usize)>,
}

impl Waiver {
    /// Required sections that are absent.
    pub fn missing_sections(&self) -> Vec<&'static str> {
        SECTIONS
            .iter()
            .copied()
            .filter(|s| !self.sections.iter().any(|(t, _)| t.eq_ignore_ascii_case(s)))
            .collect()
    }

    /// The file name must be the PR number of the title.
    pub fn name_matches_pr(&self) -> bool {
        self.file_pr == Some(self.pr)
    }

    /// Whether the waiver covers `key`.
    pub fn covers(&self, key: &str) -> bool {
        self.config_keys.iter().any(|k| k.value == key)
    }
}

/// Parses a waiver. Fails when the bytes are not UTF-8 or no `# …` title
/// names a PR (`#<digits>`).
pub fn parse(file: &str, bytes: &[u8]) -> Result<Waiver, ParseError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let before = &bytes[..e.valid_up_to()];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let col = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
        ParseError::new(Loc::new(file, line, col), "waiver is not valid UTF-8")
    })?;
    let lines: Vec<&str> = text.lines().collect();
    let (title_idx, title) = lines
        .iter()
        .enumerate()
        .find_map(|(i, l)| l.strip_prefix("# ").map(|t| (i, t)))
        .ok_or_else(|| ParseError::new(Loc::new(file, 1, 1), "waiver has no `# …` title"))?;
    let pr = pr_number(title).ok_or_else(|| {
        ParseError::new(
            Loc::new(file, title_idx + 1, 3),
            format!("waiver title `{}` names no PR (`#<number>`)", title.trim()),
        )
    })?;
    let name = file.rsplit('/').next().unwrap_or(file);
    let file_pr = name.strip_suffix(".md").and_then(|n| n.parse::<u64>().ok());
    let dir = file.rsplit_once('/').map_or("", |(d, _)| d);

    let mut w = Waiver {
        file: file.to_owned(),
        pr,
        title_line: title_idx + 1,
        file_pr,
        config_keys: Vec::new(),
        image: None,
        patch_entrypoint: None,
        linked_paths: Vec::new(),
        patches: Vec::new(),
        upstream_links: Vec::new(),
        removal_plan: String::new(),
        sections: Vec::new(),
    };
    let mut section = String::new();
    let mut in_table = false;
    for (i, l) in lines.iter().enumerate() {
        let line = i + 1;
        if let Some(h) = l.strip_prefix("## ") {
            section = h.trim().to_owned();
            w.sections.push((section.clone(), line));
            in_table = false;
            continue;
        }
        for target in link_targets(l) {
            if let Some(p) = resolve(dir, target) {
                w.linked_paths.push(Line { value: p, line });
            }
        }
        match section.as_str() {
            "Config covered" => {
                let bullet = l.trim_start().trim_start_matches("- ");
                if let Some(rest) = bullet.strip_prefix("**Master config entry:**") {
                    // "`key` in [`configs/amd-master.yaml`](…)": keys come before " in ".
                    let keys = rest.split(" in ").next().unwrap_or(rest);
                    for k in backticked(keys) {
                        w.config_keys.push(Line { value: k, line });
                    }
                } else if let Some(rest) = bullet.strip_prefix("**Pinned image:**") {
                    w.image = backticked(rest)
                        .into_iter()
                        .next()
                        .map(|v| Line { value: v, line });
                } else if let Some(rest) = bullet.strip_prefix("**Patch entrypoint:**") {
                    w.patch_entrypoint = backticked(rest)
                        .into_iter()
                        .next()
                        .map(|v| Line { value: v, line });
                }
            }
            "What is patched" => {
                let t = l.trim();
                if t.starts_with('|') {
                    let cells: Vec<&str> = t.trim_matches('|').split('|').map(str::trim).collect();
                    let sep = cells
                        .iter()
                        .all(|c| c.chars().all(|ch| matches!(ch, '-' | ':')));
                    if !in_table {
                        in_table = true; // header row
                    } else if !sep && let [upstream, change, notes, ..] = cells.as_slice() {
                        w.patches.push(Patch {
                            line,
                            upstream: (*upstream).to_owned(),
                            change: (*change).to_owned(),
                            notes: (*notes).to_owned(),
                        });
                    }
                }
            }
            "Upstream PR / issue links" => {
                for url in urls(l) {
                    w.upstream_links.push(Line {
                        value: url.to_owned(),
                        line,
                    });
                }
            }
            "Removal plan" if !l.trim().is_empty() => {
                if !w.removal_plan.is_empty() {
                    w.removal_plan.push(' ');
                }
                w.removal_plan.push_str(l.trim());
            }
            _ => {}
        }
    }
    Ok(w)
}

/// "… — PR #2508" → 2508.
fn pr_number(s: &str) -> Option<u64> {
    let mut rest = s;
    while let Some(i) = rest.find('#') {
        let digits: String = rest[i + 1..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if let Ok(n) = digits.parse() {
            return Some(n);
        }
        rest = &rest[i + 1..];
    }
    None
}

fn backticked(s: &str) -> Vec<String> {
    s.split('`')
        .enumerate()
        .filter(|(i, t)| i % 2 == 1 && !t.is_empty())
        .map(|(_, t)| t.to_owned())
        .collect()
}

/// Targets of `[text](target)` links.
fn link_targets(l: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = l;
    while let Some(i) = rest.find("](") {
        let after = &rest[i + 2..];
        match after.find(')') {
            Some(j) => {
                out.push(&after[..j]);
                rest = &after[j + 1..];
            }
            None => break,
        }
    }
    out
}

fn urls(l: &str) -> Vec<&str> {
    l.split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')')
        .filter(|t| t.starts_with("https://") || t.starts_with("http://"))
        .map(|t| t.trim_end_matches(['.', ';']))
        .collect()
}

/// A relative link target as a repository path (`../../configs/x.yaml`
/// from `docs/waiver` is `configs/x.yaml`); `None` for URLs, anchors and
/// links that leave the repository.
fn resolve(dir: &str, target: &str) -> Option<String> {
    let target = target.split('#').next().unwrap_or(target);
    if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let mut parts: Vec<&str> = if target.starts_with('/') {
        Vec::new()
    } else {
        dir.split('/').filter(|p| !p.is_empty()).collect()
    };
    for seg in target.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_relative_links() {
        assert_eq!(
            resolve("docs/waiver", "../../benchmarks/a.sh").as_deref(),
            Some("benchmarks/a.sh")
        );
        assert_eq!(
            resolve("docs/waiver", "../PR_REVIEW_CHECKLIST.md").as_deref(),
            Some("docs/PR_REVIEW_CHECKLIST.md")
        );
        assert_eq!(resolve("docs/waiver", "../../../x"), None);
        assert_eq!(resolve("docs/waiver", "https://x/y"), None);
    }

    #[test]
    fn title_must_name_a_pr() {
        let e = parse("docs/waiver/1.md", b"intro\n# Waiver for something\n").unwrap_err();
        assert_eq!((e.loc.line, e.loc.column), (2, 3));
        let w = parse(
            "docs/waiver/7.md",
            b"# Waiver - PR #8\n## Removal plan\nSoon.\n",
        )
        .unwrap();
        assert!(!w.name_matches_pr());
        assert_eq!(w.removal_plan, "Soon.");
        assert_eq!(w.missing_sections().len(), 4);
    }
}
