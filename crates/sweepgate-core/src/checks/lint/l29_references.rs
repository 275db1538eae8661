//! L29 (I): paths cited in MODELS.md, the golden README and waivers exist
//! at head (docs/rules.md §3 L29). Run when one of those files changes.

use std::sync::LazyLock;

use regex::Regex;

use super::context::Context;
use super::{Finding, Rule, Severity};

pub(crate) const RULE: Rule = Rule {
    id: "L29",
    name: "references-resolve",
    description: "Repository paths cited in MODELS.md, the golden README and waivers exist.",
    check,
};

static PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:`|\]\(|\(|^|\s)((?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]+\.(?:yaml|yml|sh|md|py|json|toml))").expect("literal regex")
});

fn check(ctx: &Context<'_>) -> Vec<Finding> {
    let p = &ctx.input.config.paths;
    let readme = format!("{}README.md", p.golden_al_dir);
    let mut out = Vec::new();
    for c in &ctx.input.changed {
        let doc = c.path == p.models_policy
            || c.path == readme
            || (c.path.starts_with(&p.waivers_dir) && c.path.ends_with(".md"));
        if !doc {
            continue;
        }
        let Some(text) = ctx.input.head_text(&c.path) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            for m in PATH.captures_iter(line) {
                let cited = m[1].trim_start_matches("./");
                if cited.starts_with("http") || cited.contains("://") {
                    continue;
                }
                let rel = match c.path.rsplit_once('/') {
                    Some((dir, _)) => format!("{dir}/{cited}"),
                    None => cited.to_string(),
                };
                if !ctx.input.head_tree.contains(cited) && !ctx.input.head_tree.contains(&rel) {
                    out.push(
                        Finding::new(
                            "L29",
                            Severity::Info,
                            &c.path,
                            i + 1,
                            format!("cites `{cited}`, which does not exist at this commit"),
                        )
                        .fix("update or remove the reference"),
                    );
                }
            }
        }
    }
    out
}
