//! Check 3 — Upstream recipe (`docs/rules.md` §2 Check 3): a
//! single-node vLLM/SGLang key must be documented upstream by a merged
//! recipe PR (or a published page) whose major arguments agree with the
//! shipped launch. It decides what the data decides (link, merge state,
//! contradicting values) and returns REVIEW with the facts otherwise
//! (an arg absent upstream, a page it could not read offline).
use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;

use super::snapshot::{Family, UpstreamPr};
use super::{CheckResult, Evidence, Snapshot, join_list, strip_shell_comments};
use crate::config::RepoConfig;

const N: u8 = 3;

/// Canonical major-argument names and their aliases.
const MAJOR: [(&str, &[&str]); 14] = [
    ("model-path", &["model-path", "model"]),
    (
        "tensor-parallel-size",
        &["tensor-parallel-size", "tp", "tp-size"],
    ),
    (
        "expert-parallel-size",
        &["expert-parallel-size", "ep", "ep-size"],
    ),
    (
        "data-parallel-size",
        &["data-parallel-size", "dp", "dp-size"],
    ),
    (
        "pipeline-parallel-size",
        &["pipeline-parallel-size", "pp", "pp-size"],
    ),
    ("enable-dp-attention", &["enable-dp-attention"]),
    ("quantization", &["quantization"]),
    ("kv-cache-dtype", &["kv-cache-dtype"]),
    ("attention-backend", &["attention-backend"]),
    ("moe-runner-backend", &["moe-runner-backend"]),
    (
        "enable-flashinfer-allreduce-fusion",
        &["enable-flashinfer-allreduce-fusion"],
    ),
    (
        "speculative-algorithm",
        &["speculative-algorithm", "speculative-algo"],
    ),
    ("speculative-num-steps", &["speculative-num-steps"]),
    (
        "speculative-dspark-block-size",
        &["speculative-dspark-block-size"],
    ),
];

static FLAG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"--([a-zA-Z0-9][a-zA-Z0-9_-]*)(?:[ =]+("[^"]*"|'[^']*'|[^\s\\'"-][^\s\\'"]*))?"#)
        .unwrap_or_else(|_| unreachable!())
});
static YAML_KEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?m)^\s*-?\s*([a-z][a-z0-9-]*):[ \t]*("[^"]*"|'[^']*'|[^\s#]+)?"#)
        .unwrap_or_else(|_| unreachable!())
});
static GH_PR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:https?://)?github\.com/([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)/pull/(\d+)|\b([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)#(\d+)\b")
        .unwrap_or_else(|_| unreachable!())
});

fn canonical(name: &str) -> Option<&'static str> {
    let n = name.replace('_', "-");
    MAJOR
        .iter()
        .find(|(_, aliases)| aliases.contains(&n.as_str()))
        .map(|(c, _)| *c)
}

fn clean(v: &str) -> String {
    v.trim()
        .trim_matches(['"', '\''])
        .trim_end_matches([',', ';'])
        .to_ascii_lowercase()
}

/// Major args of a text: canonical flag → values.
pub(crate) fn major_args(text: &str) -> BTreeMap<&'static str, Vec<String>> {
    let mut out: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    let text = strip_shell_comments(text);
    let mut put = |k: &'static str, v: String| {
        let e = out.entry(k).or_default();
        if !e.contains(&v) {
            e.push(v);
        }
    };
    for c in FLAG.captures_iter(&text) {
        let Some(k) = c.get(1).and_then(|m| canonical(m.as_str())) else {
            continue;
        };
        let v = c.get(2).map(|m| m.as_str()).unwrap_or("");
        if v.is_empty() || k.starts_with("enable") {
            put(k, "true".into());
        } else if !v.starts_with('$') {
            put(k, clean(v));
        }
    }
    for c in YAML_KEY.captures_iter(&text) {
        let Some(k) = c.get(1).and_then(|m| canonical(m.as_str())) else {
            continue;
        };
        // `model:` in a YAML recipe is a block; only scalar values count.
        match c.get(2).map(|m| m.as_str()) {
            Some(v) if !v.starts_with('$') && !v.starts_with('{') && !v.starts_with('[') => {
                put(k, clean(v))
            }
            _ => {}
        }
    }
    out
}

/// Links to upstream recipes in a text: (repo, number) PRs and page URLs.
pub fn links(text: &str, cfg: &RepoConfig) -> (Vec<(String, u64)>, Vec<String>) {
    let repos = [
        &cfg.upstream.sglang_repository,
        &cfg.upstream.vllm_recipes_repository,
    ];
    let mut prs = Vec::new();
    for c in GH_PR.captures_iter(text) {
        let (repo, n) = match (c.get(1), c.get(2), c.get(3), c.get(4)) {
            (Some(r), Some(n), _, _) | (_, _, Some(r), Some(n)) => (r.as_str(), n.as_str()),
            _ => continue,
        };
        if repos.iter().any(|r| r.eq_ignore_ascii_case(repo))
            && let Ok(n) = n.parse::<u64>()
            && !prs.contains(&(repo.to_owned(), n))
        {
            prs.push((repo.to_owned(), n));
        }
    }
    let mut pages = Vec::new();
    for word in text.split_whitespace() {
        let w = word.trim_matches(|c: char| matches!(c, '(' | ')' | '<' | '>' | ',' | '.' | '"'));
        if cfg
            .upstream
            .published_pages
            .iter()
            .any(|p| w.starts_with(p.as_str()))
            && !pages.contains(&w.to_owned())
        {
            pages.push(w.to_owned());
        }
    }
    (prs, pages)
}

pub(crate) fn check(s: &Snapshot, cfg: &RepoConfig) -> CheckResult {
    let facts = s.facts(cfg);
    if facts.changed.is_empty() {
        return CheckResult::na(N, "no single-node vLLM/SGLang recipe changed.");
    }
    let single: Vec<_> = facts
        .changed
        .iter()
        .filter(|k| !k.entry.is_multinode())
        .collect();
    if single.is_empty() {
        return CheckResult::na(
            N,
            "disaggregated/multi-node submission; the recipe-link requirement applies to single-node recipes only.",
        );
    }
    let keys: Vec<_> = single
        .into_iter()
        .filter(|k| k.entry.family() != Family::Other)
        .collect();
    if keys.is_empty() {
        return CheckResult::na(N, "no single-node vLLM/SGLang recipe changed.");
    }
    let detail = s.detail_section();
    let (prs, pages) = links(&detail, cfg);
    if prs.is_empty() && pages.is_empty() {
        return CheckResult::fail(
            N,
            "no upstream recipe link in the sign-off's additional detail section.",
        );
    }
    let mut verified: Vec<String> = Vec::new();
    let mut upstream_text = String::new();
    let mut ev = Vec::new();
    let mut unread: Vec<String> = Vec::new();
    let mut not_recipe: Vec<String> = Vec::new();
    for (repo, n) in &prs {
        let name = format!("{repo}#{n}");
        let pr = s.upstream_prs.as_ref().and_then(|l| {
            l.iter()
                .find(|p: &&UpstreamPr| p.repo.eq_ignore_ascii_case(repo) && p.number == *n)
        });
        let Some(pr) = pr else {
            unread.push(name);
            continue;
        };
        // An SGLang PR that changes no cookbook file is an engine change the
        // sign-off cites, not a recipe.
        if repo.eq_ignore_ascii_case(&cfg.upstream.sglang_repository)
            && !pr.files.iter().any(|f| {
                cfg.upstream
                    .sglang_paths
                    .iter()
                    .any(|p| f.path.starts_with(p.as_str()))
            })
        {
            not_recipe.push(name);
            continue;
        }
        ev.push(Evidence::Link {
            url: pr.url.clone(),
        });
        let merged_at = pr.merged_at.as_deref().filter(|m| !m.is_empty());
        let Some(at) = merged_at.filter(|_| pr.merged) else {
            let state = if pr.draft { "draft" } else { pr.state.as_str() };
            return CheckResult::fail(N, format!("{name} not merged (state={state})."))
                .with_all(ev);
        };
        verified.push(format!("{name} is MERGED ({at})"));
        for f in &pr.files {
            if let Some(p) = &f.patch {
                upstream_text.push_str(p);
                upstream_text.push('\n');
            }
        }
    }
    if verified.is_empty() && !unread.is_empty() {
        return CheckResult::review(
            N,
            format!(
                "upstream PR {} was not read (no GitHub access); its merge state is unverified.",
                unread.join(", ")
            ),
        );
    }
    if verified.is_empty()
        && pages.is_empty()
        && let Some(name) = not_recipe.first()
    {
        return CheckResult::fail(
            N,
            format!(
                "{name} changes no file under {}; it is not a cookbook recipe.",
                cfg.upstream.sglang_paths.join(" or ")
            ),
        );
    }
    let mut unread_pages = Vec::new();
    for url in &pages {
        match s.pages.iter().find(|p| p.url == *url) {
            Some(p) if p.status == Some(200) => {
                verified.push(format!("{url} is published"));
                if let Some(b) = &p.body {
                    upstream_text.push_str(b);
                }
            }
            Some(p) if p.status.is_some() => {
                if prs.is_empty() {
                    return CheckResult::fail(
                        N,
                        format!(
                            "{url} answered HTTP {}; the recipe cannot be verified.",
                            p.status.unwrap_or(0)
                        ),
                    );
                }
            }
            _ => unread_pages.push(url.clone()),
        }
    }
    if prs.is_empty() && !unread_pages.is_empty() {
        return CheckResult::review(
            N,
            format!("published page {} could not be read offline; a person must confirm it carries the recipe.", unread_pages.join(", ")),
        )
        .with_all(unread_pages.into_iter().map(|url| Evidence::Link { url }));
    }
    // Major arguments.
    let up = major_args(&upstream_text);
    let mut checked = 0usize;
    let mut absent: Vec<String> = Vec::new();
    for k in &keys {
        let mut text = String::new();
        for (_, t) in k.launch_texts(s) {
            text.push_str(t);
            text.push('\n');
        }
        if !k.entry.model().is_empty() {
            text.push_str(&format!("\n--model-path {}\n", k.entry.model()));
        }
        for (flag, values) in major_args(&text) {
            let Some(upv) = up.get(flag) else {
                let a = format!("--{flag}");
                if !absent.contains(&a) {
                    absent.push(a);
                }
                continue;
            };
            for v in values {
                if !upv.contains(&v) {
                    return CheckResult::fail(
                        N,
                        format!(
                            "major arg --{flag}={v} of {} contradicts the upstream recipe ({}).",
                            k.key,
                            upv.join(", ")
                        ),
                    )
                    .with_all(ev);
                }
                checked += 1;
            }
        }
    }
    if !absent.is_empty() {
        return CheckResult::review(
            N,
            format!(
                "{}; major args absent from the upstream recipe: {} (a person must confirm equivalence).",
                join_list(&verified),
                absent.join(", ")
            ),
        )
        .with_all(ev);
    }
    CheckResult::pass(
        N,
        format!(
            "{}; {checked} major argument values of {} match the upstream recipe.",
            join_list(&verified),
            keys.iter()
                .map(|k| k.key.clone())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )
    .with_all(ev)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Outcome;
    use crate::checks::snapshot::{ChangedFile, Signoff};

    const MASTER: &str = "m-fp8-h200-sglang:\n  image: lmsysorg/sglang:v1\n  model: org/M\n  model-prefix: m\n  precision: fp8\n  framework: sglang\n  runner: h200\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - { tp: 8, conc-list: [4] }\n";
    const SCRIPT: &str = "#!/bin/bash\npython3 -m sglang.launch_server --model-path $MODEL --tensor-parallel-size 8 --attention-backend fa3 \\\n  --port 8888\n";

    fn snap(detail: &str, pr: Option<UpstreamPr>) -> Snapshot {
        let mut s = Snapshot::default();
        s.head_files
            .insert("configs/nvidia-master.yaml".into(), MASTER.into());
        s.head_files.insert(
            "benchmarks/single_node/fixed_seq_len/m_fp8_h200.sh".into(),
            SCRIPT.into(),
        );
        s.files = vec![ChangedFile {
            path: "configs/nvidia-master.yaml".into(),
            status: "added".into(),
            ..Default::default()
        }];
        s.signoff = Some(Signoff {
            author: "x".into(),
            body: format!(
                "As a PR reviewer and CODEOWNER\n### Additional detail section:\n{detail}\nSigned: x\n"
            ),
            ..Default::default()
        });
        s.upstream_prs = pr.map(|p| vec![p]);
        s
    }

    fn pr(merged: bool, patch: &str) -> UpstreamPr {
        UpstreamPr {
            repo: "sgl-project/sglang".into(),
            number: 5,
            state: if merged { "closed" } else { "open" }.into(),
            merged,
            merged_at: merged.then(|| "2026-10-16T11:31:09Z".into()),
            url: "https://github.com/sgl-project/sglang/pull/5".into(),
            files: vec![ChangedFile {
                path: "docs_new/m.md".into(),
                status: "added".into(),
                patch: Some(patch.into()),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn merged_pr_with_matching_args_passes() {
        let s = snap(
            "- https://github.com/sgl-project/sglang/pull/5",
            Some(pr(
                true,
                "+python3 -m sglang.launch_server --model-path org/M --tensor-parallel-size 8 --attention-backend fa3",
            )),
        );
        let r = check(&s, &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Pass, "{}", r.reason);
        assert_eq!(
            r.reason,
            "sgl-project/sglang#5 is MERGED (2026-10-16T11:31:09Z); 3 major argument values of m-fp8-h200-sglang match the upstream recipe."
        );
    }

    #[test]
    fn missing_link_open_pr_and_contradiction_fail() {
        let r = check(&snap("- none", None), &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Fail);
        assert_eq!(
            r.reason,
            "no upstream recipe link in the sign-off's additional detail section."
        );
        let r = check(
            &snap("sgl-project/sglang#5", Some(pr(false, "+x"))),
            &RepoConfig::default(),
        );
        assert_eq!(r.reason, "sgl-project/sglang#5 not merged (state=open).");
        let r = check(
            &snap(
                "sgl-project/sglang#5",
                Some(pr(
                    true,
                    "+--model-path org/M --tensor-parallel-size 4 --attention-backend fa3",
                )),
            ),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Fail);
        assert!(
            r.reason.starts_with("major arg --tensor-parallel-size=8"),
            "{}",
            r.reason
        );
    }

    #[test]
    fn absent_arg_and_offline_page_review() {
        let r = check(
            &snap(
                "sgl-project/sglang#5",
                Some(pr(true, "+--model-path org/M --tensor-parallel-size 8")),
            ),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Review);
        assert!(r.reason.ends_with("major args absent from the upstream recipe: --attention-backend (a person must confirm equivalence)."), "{}", r.reason);
        let r = check(
            &snap("https://docs.sglang.io/cookbook/m", None),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Review);
    }
}
