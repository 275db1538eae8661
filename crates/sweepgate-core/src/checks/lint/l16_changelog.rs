//! L16 (E / W): perf-changelog hygiene (docs/rules.md §3 L16; seeds 001,
//! 003): a master-config change needs a new entry, new entries are at the
//! end, and `pr-link` is this PR's canonical link (a placeholder such as
//! `XXX` or `TBD` warns on a PR).

use super::context::Context;
use super::{Finding, Rule, Severity};

pub(crate) const RULE: Rule = Rule {
    id: "L16",
    name: "changelog-hygiene",
    description: "A master-config change appends a changelog entry whose pr-link is this PR.",
    check,
};

enum Link {
    Pr(u64),
    Placeholder,
    Other,
}

/// `repos`: the repository's name, then its former names.
fn classify(link: &str, repos: &[&str], placeholders: &[String]) -> Link {
    let link = link.trim();
    if placeholders.iter().any(|p| p == link) {
        return Link::Placeholder;
    }
    let rest = repos.iter().find_map(|repo| {
        let prefix = format!("https://github.com/{repo}/pull/");
        link.get(..prefix.len())
            .filter(|p| p.eq_ignore_ascii_case(&prefix))
            .map(|_| &link[prefix.len()..])
    });
    match rest {
        Some(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            n.parse().map_or(Link::Other, Link::Pr)
        }
        Some(n) if placeholders.iter().any(|p| p == n) => Link::Placeholder,
        _ => Link::Other,
    }
}

/// How many times `text` links PR `n` (`/pull/<n>` not followed by a digit).
fn links_to(text: &str, n: u64) -> usize {
    let pat = format!("/pull/{n}");
    text.match_indices(&pat)
        .filter(|(i, _)| {
            !text[i + pat.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit())
        })
        .count()
}

/// `head` is `base` with parts removed and nothing added or changed: every
/// mapping key of `head` is in `base` with a value that only removes, every
/// list item of `head` is such a part of some item of `base`.
fn only_removes(base: &serde_json::Value, head: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (base, head) {
        (Value::Object(b), Value::Object(h)) => h
            .iter()
            .all(|(k, v)| b.get(k).is_some_and(|bv| only_removes(bv, v))),
        (Value::Array(b), Value::Array(h)) => {
            h.len() <= b.len() && h.iter().all(|x| b.iter().any(|y| only_removes(y, x)))
        }
        _ => base == head,
    }
}

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let cfg = &ctx.input.config;
    let d = &ctx.input.data;
    let path = cfg.paths.changelog.as_str();
    let mut out = Vec::new();
    let new_entries = ctx.new_changelog_entries();
    let master_changed = cfg
        .paths
        .master_configs
        .iter()
        .any(|m| ctx.input.is_changed(m));
    // A PR that only removes keys has nothing to sweep (`f9b33e8`, #2227,
    // a revert that drops a key and its entry), nor one that only removes
    // parts of keys (`e732087`, #2263, moves the 1k1k scenarios of existing
    // keys to `configs/deprecated/`).
    let to_sweep: Vec<_> = ctx
        .direct_keys()
        .into_iter()
        .filter(
            |e| match (ctx.base_entries.get(&e.key), ctx.head_entries.get(&e.key)) {
                (Some(b), Some(h)) => !only_removes(b, h),
                _ => true,
            },
        )
        .collect();
    if master_changed && new_entries.is_empty() && !to_sweep.is_empty() {
        let (file, line) = to_sweep.first().map(|e| ctx.key_loc(e)).unwrap_or_else(|| {
            (
                cfg.paths
                    .master_configs
                    .first()
                    .cloned()
                    .unwrap_or_default(),
                1,
            )
        });
        out.push(
            Finding::new("L16", Severity::Error, &file, line, "the master config changed but perf-changelog.yaml has no new entry, so no sweep is triggered")
                .subject("new entry")
                .fix(format!("append an entry naming the changed keys at the end of {path}")),
        );
    }
    // New entries must be appended: base entries unchanged in place.
    if let (Some(b), Some(h)) = (&ctx.base_changelog, &ctx.head_changelog) {
        let moved = b
            .entries
            .iter()
            .zip(h.entries.iter())
            .find(|(x, y)| !x.same_except_link(y));
        if let Some((_, y)) = moved
            && h.items > b.items
        {
            out.push(
                // A warning: against a parent rather than the merge base,
                // a squash merge's own placement looks like an insertion
                // (`c2a3693`, #620, appended after #613's entry on its
                // branch while later entries landed on main); the reference
                // changelog gate (Check 12) judges append-only itself.
                Finding::new("L16", Severity::Warning, path, y.line, "a new changelog entry is inserted before existing ones; new entries go at the end of the file")
                    .subject("entry position")
                    .fix("move the new entry to the end of the file"),
            );
        }
    }
    // Read as text only when a new entry links a PR (a 400 KB file each).
    let texts = std::cell::OnceCell::new();
    let texts = || {
        texts.get_or_init(|| {
            let text =
                |b: Option<&[u8]>| String::from_utf8_lossy(b.unwrap_or_default()).into_owned();
            (text(ctx.input.base(path)), text(ctx.input.head(path)))
        })
    };
    for e in new_entries {
        let link = &e.pr_link;
        let repos: Vec<&str> = std::iter::once(d.repository.as_str())
            .chain(d.former_repositories.iter().map(String::as_str))
            .collect();
        match classify(&link.value, &repos, &d.link_placeholders) {
            Link::Pr(n) => {
                // Another PR's link the base already carried as often (a
                // reformatted entry: `d79757f`, #343, turns `PR: …/pull/95`
                // lines into `pr-link` fields; a renamed repository:
                // `5f4a8fa`, #759) is that PR's old entry, not this PR's. A
                // copy beyond the base's count is new (a duplicated entry).
                let (base_text, head_text) = texts();
                let old = links_to(head_text, n) <= links_to(base_text, n);
                if let Some(pr) = ctx.input.pr
                    && n != pr
                    && !old
                {
                    out.push(
                        Finding::new(
                            "L16",
                            Severity::Error,
                            path,
                            link.line,
                            format!("pr-link points at #{n}, but this is PR #{pr}"),
                        )
                        .subject("pr-link")
                        .fix(format!(
                            "pr-link: https://github.com/{}/pull/{pr}",
                            d.repository
                        )),
                    );
                }
            }
            Link::Placeholder => {
                let sev = if ctx.input.pr.is_some() {
                    Severity::Warning
                } else {
                    Severity::Error
                };
                let mut f = Finding::new(
                    "L16",
                    sev,
                    path,
                    link.line,
                    format!(
                        "pr-link is the placeholder `{}`; it must name this PR before merge",
                        link.value
                    ),
                );
                if let Some(pr) = ctx.input.pr {
                    f = f.fix(format!(
                        "pr-link: https://github.com/{}/pull/{pr}",
                        d.repository
                    ));
                }
                out.push(f.subject("pr-link"));
            }
            Link::Other => {
                let mut f = Finding::new(
                    "L16",
                    Severity::Error,
                    path,
                    link.line,
                    format!(
                        "pr-link `{}` is not a canonical `https://github.com/{}/pull/<n>` link",
                        link.value, d.repository
                    ),
                );
                if let Some(pr) = ctx.input.pr {
                    f = f.fix(format!(
                        "pr-link: https://github.com/{}/pull/{pr}",
                        d.repository
                    ));
                }
                out.push(f.subject("pr-link"));
            }
        }
    }
    out
}

#[cfg(test)]
mod link_count_tests {
    /// `e732087` (#2263) moves the 1k1k scenarios of existing keys out:
    /// a key that only loses parts has nothing to sweep; a changed value
    /// or an added row has.
    #[test]
    fn a_key_that_only_loses_parts_only_removes() {
        let base = serde_json::json!({"image": "a", "scenarios": {"fixed-seq-len": [
            {"isl": 1024, "osl": 1024, "search-space": [{"tp": 8}]},
            {"isl": 8192, "osl": 1024, "search-space": [{"tp": 8}, {"tp": 4}]}]}});
        let moved = serde_json::json!({"image": "a", "scenarios": {"fixed-seq-len": [
            {"isl": 8192, "osl": 1024, "search-space": [{"tp": 8}, {"tp": 4}]}]}});
        assert!(super::only_removes(&base, &moved));
        let bumped = serde_json::json!({"image": "b", "scenarios": {}});
        assert!(!super::only_removes(&base, &bumped));
        let grown = serde_json::json!({"image": "a", "scenarios": {"fixed-seq-len": [
            {"isl": 8192, "osl": 1024, "search-space": [{"tp": 8}, {"tp": 4}, {"tp": 2}]}]}});
        assert!(!super::only_removes(&base, &grown));
    }

    #[test]
    fn links_are_counted_by_number() {
        let t = "PR: https://x/pull/95\npr-link: https://y/pull/95\n- https://y/pull/950\n";
        assert_eq!(super::links_to(t, 95), 2);
        assert_eq!(super::links_to(t, 950), 1);
        assert_eq!(super::links_to(t, 9), 0);
    }
}
