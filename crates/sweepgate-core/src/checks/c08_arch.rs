//! Check 8 — No architecture hacks (`docs/rules.md` §2 Check 8): an
//! added line overriding the model config (`--hf-overrides`,
//! `--json-model-override-args`, an edit of `config.json`) is REVIEW naming
//! the keys (watch-list keys flagged as FLOP-reduction candidates); whether
//! the model natively supports it is for a person.
use super::{CheckResult, Snapshot, added_lines};
use crate::config::RepoConfig;

const N: u8 = 8;

const FLAGS: [&str; 6] = [
    "--hf-overrides",
    "hf_overrides",
    "hf-overrides:",
    "--json-model-override-args",
    "json-model-override-args:",
    "json_model_override_args",
];

const WATCH: [&str; 15] = [
    "num_hidden_layers",
    "num_experts",
    "n_routed_experts",
    "num_experts_per_tok",
    "moe_topk",
    "topk_group",
    "num_attention_heads",
    "num_key_value_heads",
    "first_k_dense_replace",
    "moe_layer_freq",
    "index_topk",
    "index_topk_freq",
    "use_index_cache",
    "sliding_window",
    "max_window_layers",
];

/// Whether a path can carry server arguments.
pub(crate) fn touches_server_args(path: &str, cfg: &RepoConfig) -> bool {
    cfg.paths.master_configs.iter().any(|m| m == path)
        || path.starts_with(&cfg.paths.benchmarks)
        || path.starts_with("runners/")
        || path.contains("srt-slurm-recipes/")
        || path.contains("srt_slurm")
}

/// Keys named in an override value (JSON keys or `a.b=c` items).
fn override_keys(line: &str) -> Vec<String> {
    let mut keys = Vec::new();
    for w in line.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.')) {
        let last = w.rsplit('.').next().unwrap_or(w);
        let leaf = line
            .find(&format!("\"{last}\":"))
            .map(|i| &line[i + last.len() + 3..])
            .is_some_and(|rest| !rest.trim_start().starts_with('{'));
        if WATCH.contains(&last) || (last.contains('_') && leaf) {
            let k = last.to_owned();
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    keys
}

pub(crate) fn check(s: &Snapshot, cfg: &RepoConfig) -> CheckResult {
    let files: Vec<_> = s
        .files
        .iter()
        .filter(|f| touches_server_args(&f.path, cfg))
        .collect();
    if files.is_empty() {
        return CheckResult::na(N, "no server args touched.");
    }
    let mut hits: Vec<(String, usize, Vec<String>)> = Vec::new();
    for f in files {
        let Some(p) = &f.patch else { continue };
        for (line, text) in added_lines(p) {
            let t = text.trim_start();
            if t.starts_with('#') {
                continue;
            }
            let flag = FLAGS.iter().any(|x| t.contains(x));
            let json_empty = t.contains("json_model_override_args") && t.contains("'{}'");
            let edits_config = t.contains("config.json")
                && (t.contains("sed -i")
                    || t.contains("jq ")
                    || t.contains("open(")
                    || t.contains("> "));
            if (flag && !json_empty) || edits_config {
                let mut keys = override_keys(t);
                if keys.is_empty() {
                    keys.push(if edits_config {
                        "config.json".into()
                    } else {
                        "unparsed value".into()
                    });
                }
                hits.push((f.path.clone(), line, keys));
            }
        }
    }
    let Some((path, line, keys)) = hits.first() else {
        return CheckResult::pass(
            N,
            "no --hf-overrides, JSON model overrides, or model-file edits in the diff.",
        );
    };
    let watch: Vec<&String> = keys
        .iter()
        .filter(|k| WATCH.contains(&k.as_str()))
        .collect();
    let flops = if watch.is_empty() {
        String::new()
    } else {
        " (FLOP-reduction candidates)".to_owned()
    };
    let more = if hits.len() > 1 {
        format!(" ({} more override lines)", hits.len() - 1)
    } else {
        String::new()
    };
    CheckResult::review(
        N,
        format!(
            "{path}:{line} overrides {}{flops}; confirm native support / unchanged FLOPs{more}.",
            keys.join(", ")
        ),
    )
    .with_all(hits.iter().map(|(p, l, _)| super::Evidence::File {
        path: p.clone(),
        line: *l,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Outcome;
    use crate::checks::snapshot::ChangedFile;

    fn snap(patch: &str) -> Snapshot {
        let mut s = Snapshot::default();
        s.files = vec![ChangedFile {
            path: "benchmarks/single_node/agentic/m_fp4_mi355x_mtp.sh".into(),
            status: "modified".into(),
            patch: Some(patch.into()),
            ..Default::default()
        }];
        s
    }

    #[test]
    fn override_is_review_with_keys_and_line() {
        let r = check(
            &snap(
                "@@ -1,1 +1,2 @@\n a\n+  --hf-overrides '{\"text_config\": {\"use_index_cache\": true, \"index_topk_freq\": 4}}' \\\n",
            ),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Review);
        assert_eq!(
            r.reason,
            "benchmarks/single_node/agentic/m_fp4_mi355x_mtp.sh:2 overrides use_index_cache, index_topk_freq (FLOP-reduction candidates); confirm native support / unchanged FLOPs."
        );
    }

    #[test]
    fn clean_diff_passes_and_untouched_is_na() {
        let r = check(
            &snap("@@ -1,1 +1,2 @@\n a\n+  --tp 8\n"),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Pass);
        let mut s = snap("");
        s.files[0].path = "README.md".into();
        assert_eq!(
            check(&s, &RepoConfig::default()).outcome,
            Outcome::NotApplicable
        );
    }
}
