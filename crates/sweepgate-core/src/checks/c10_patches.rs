//! Check 10 — No engine patches (`docs/rules.md` §2 Check 10): added
//! lines that patch the engine or serving stack (patch files, `git apply`,
//! in-place edits of engine paths, serving-process `sitecustomize`, engine
//! wheels installed before serving, `apply_*patch*.sh`) fail unless this PR
//! adds `docs/waiver/<PR>.md` with the required sections and the sign-off
//! links it.
use std::sync::LazyLock;

use regex::Regex;

use super::{CheckResult, Evidence, Snapshot, added_lines};
use crate::checks::lint::context::parse_script_cached;
use crate::config::RepoConfig;
use crate::recipe::script::{engine_patches, split_new};

const N: u8 = 10;

const WHEEL: &str = "an engine wheel install";

/// Files that document and never run.
fn is_document(path: &str) -> bool {
    let p = path.to_ascii_lowercase();
    [".md", ".txt", ".rst"].iter().any(|e| p.ends_with(e))
}

/// Line numbers (1-based) of a workflow's `run:` scripts: the `run:` line
/// itself and, for a block scalar (`run: |`), the lines indented under it.
fn workflow_run_lines(text: &str) -> std::collections::BTreeSet<usize> {
    let mut out = std::collections::BTreeSet::new();
    let mut block: Option<usize> = None;
    for (i, l) in text.lines().enumerate() {
        let indent = l.len() - l.trim_start().len();
        if let Some(at) = block {
            if l.trim().is_empty() || indent > at {
                out.insert(i + 1);
                continue;
            }
            block = None;
        }
        let t = l.trim_start().trim_start_matches("- ").trim_start();
        if let Some(rest) = t.strip_prefix("run:") {
            out.insert(i + 1);
            let rest = rest.trim();
            if rest.starts_with('|') || rest.starts_with('>') {
                block = Some(indent);
            }
        }
    }
    out
}

static PATCH: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    let engine = r"(/sgl-workspace/|site-packages|dist-packages|/usr/local/lib/python[0-9.]*/)";
    let wheels = r"(vllm|sglang|sgl-kernel|sgl_kernel|tensorrt_llm|tensorrt-llm|flashinfer|flashinfer-python|aiter|atom|deep_gemm|deep-gemm|deep_ep|deep-ep|torch)";
    [
        (r"\bgit\s+apply\b".to_owned(), "git apply"),
        (r"\bpatch\s+-p\s*\d".to_owned(), "patch -p"),
        (r"\S+\.(patch|diff)\b".to_owned(), "a patch file"),
        (
            format!(r"\b(sed\s+-i|perl\s+-pi)\b.*{engine}"),
            "an in-place edit of an engine path",
        ),
        (
            format!(r"\b(cp|mv|install)\b.*\s\S*{engine}"),
            "a copy into an engine path",
        ),
        (
            format!(r"cat\s*>\s*\S*{engine}"),
            "a heredoc into an engine path",
        ),
        (
            r"\b(sitecustomize|usercustomize)\b".to_owned(),
            "sitecustomize injection",
        ),
        (format!(r"\bpip3?\s+install\b.*\b{wheels}\b"), WHEEL),
        (r"\bapply_\S*patch\S*\.sh\b".to_owned(), "a patch script"),
    ]
    .into_iter()
    .filter_map(|(r, what)| Regex::new(&r).ok().map(|re| (re, what)))
    .collect()
});

const SECTIONS: [&str; 4] = [
    "What is patched",
    "Why the unmodified upstream image",
    "Upstream PR / issue links",
    "Removal plan",
];

pub(crate) fn check(s: &Snapshot, cfg: &RepoConfig) -> CheckResult {
    let touched: Vec<_> = s
        .files
        .iter()
        .filter(|f| {
            f.path.starts_with(&cfg.paths.benchmarks)
                || f.path.starts_with("runners/")
                || f.path.starts_with(".github/workflows/")
                || cfg.paths.master_configs.contains(&f.path)
                || f.path.contains("srt-slurm-recipes/")
        })
        .collect();
    if touched.is_empty() {
        return CheckResult::na(N, "no benchmark scripts, images or configs touched.");
    }
    let wheels = crate::checks::lint::LintData::defaults()
        .map(|d| d.engine_wheels)
        .unwrap_or_default();
    // Introduced by this PR (FAIL without a waiver) and pre-existing in a
    // touched script (REVIEW without a default-branch waiver naming it).
    let mut hits: Vec<(String, usize, String)> = Vec::new();
    let mut pre: Vec<(String, usize, String)> = Vec::new();
    for f in &touched {
        if f.path.ends_with(".patch") || f.path.ends_with(".diff") {
            if f.status != "removed" {
                hits.push((f.path.clone(), 1, "a patch file".to_owned()));
            }
            continue;
        }
        let added: Vec<(usize, &str)> = f.patch.as_deref().map(added_lines).unwrap_or_default();
        // Scripts: the detection lint L23 uses (variables followed).
        let facts = (f.path.ends_with(".sh") && f.status != "removed")
            .then(|| s.head_text(&f.path))
            .flatten()
            .and_then(|t| parse_script_cached(&f.path, t.as_bytes()).ok());
        if let Some(facts) = facts {
            // The base's patches of the same script (at its base path),
            // matched as lint L23's baseline matches them: a PR that swaps
            // one patch for another keeps the base's (`docs/precision.md`).
            let base_count = (f.status != "added")
                .then(|| {
                    let at = f.previous_path.as_deref().unwrap_or(&f.path);
                    s.base_files.get(at)
                })
                .flatten()
                .and_then(|t| parse_script_cached(&f.path, t.as_bytes()).ok())
                .map(|b| engine_patches(&b, &wheels).len());
            let head = engine_patches(&facts, &wheels);
            let (new, old) = match base_count {
                Some(n) => split_new(n, head, |l| added.iter().any(|(a, _)| *a == l)),
                // No base text (an added script, or a snapshot without the
                // base side): the patches on added lines are the PR's.
                None => head
                    .into_iter()
                    .partition(|h| f.status == "added" || added.iter().any(|(l, _)| *l == h.line)),
            };
            hits.extend(new.into_iter().map(|h| (f.path.clone(), h.line, h.what)));
            pre.extend(old.into_iter().map(|h| (f.path.clone(), h.line, h.what)));
            continue;
        }
        // Documentation runs nothing: `np.diff` in a README is no patch
        // file (`24bc2d7`, #1572, `patches/README.md:46`).
        if is_document(&f.path) {
            continue;
        }
        // A workflow runs only its steps' `run:` scripts; its prompts and
        // descriptions are prose (`9688a10`, #2155; `44b6970`, #2217), and
        // a workflow job has no serving process to install a wheel into
        // (`75b37f6`, `test-collectivex.yml:40`).
        let workflow = f.path.starts_with(".github/workflows/");
        let run_lines = workflow
            .then(|| s.head_text(&f.path).map(workflow_run_lines))
            .flatten()
            .unwrap_or_default();
        for (line, text) in added {
            let t = text.trim_start();
            if t.starts_with('#') || t.starts_with("//") {
                continue;
            }
            if workflow && !run_lines.contains(&line) {
                continue;
            }
            // The lm-eval client patch of benchmark_lib.sh is exempt.
            if t.contains("_patch_lm_eval") {
                continue;
            }
            if let Some((_, what)) = PATCH
                .iter()
                .find(|(re, what)| re.is_match(t) && !(workflow && *what == WHEEL))
            {
                hits.push((f.path.clone(), line, (*what).to_owned()));
            }
        }
    }
    if hits.is_empty()
        && let Some((path, line, what)) = pre.iter().find(|(p, _, _)| {
            let name = p.rsplit('/').next().unwrap_or(p);
            !s.policy.iter().any(|(wp, t)| {
                wp.starts_with(&cfg.paths.waivers_dir)
                    && (t.contains(p.as_str()) || t.contains(name))
            })
        })
    {
        return CheckResult::review(
            N,
            format!("{path}:{line} already {what} before this PR and no waiver in {} names the script; a person must confirm the patch is sanctioned.", cfg.paths.waivers_dir),
        )
        .file(path, *line);
    }
    let Some((path, line, what)) = hits.first().cloned() else {
        return CheckResult::pass(
            N,
            "the diff has no patch files, inline source rewrites, monkey-patching, or engine wheel installs.",
        );
    };
    let n = s.pr.number;
    let waiver = format!("{}{n}.md", cfg.paths.waivers_dir);
    let added = s
        .files
        .iter()
        .any(|f| f.path == waiver && f.status == "added");
    let fail = |why: String| {
        CheckResult::fail(
            N,
            format!("{path}:{line} patches the serving stack ({what}); {why}."),
        )
        .subject(path.clone())
        .file(&path, line)
    };
    if !added {
        return fail(format!("no waiver ({waiver} is not added by this PR)"));
    }
    let text = s.head_text(&waiver).unwrap_or("");
    let missing: Vec<&str> = SECTIONS
        .iter()
        .copied()
        .filter(|h| !text.contains(h))
        .collect();
    if !missing.is_empty() {
        return fail(format!("waiver missing sections {}", missing.join(", ")));
    }
    if !text.contains("github.com/") || !(text.contains("/pull/") || text.contains("/issues/")) {
        return fail("waiver has no upstream PR / issue link".to_owned());
    }
    if s.signoff.is_none() {
        // A local run has no sign-off to read the link from (`a965c94`,
        // #2508 adds its waiver).
        return CheckResult::review(
            N,
            format!("{path}:{line} patches the serving stack ({what}); {waiver} is added, and no sign-off was provided to confirm it links the waiver."),
        )
        .file(&path, line);
    }
    if !s.detail_section().contains(&format!("{n}.md")) {
        return fail("waiver not linked in sign-off".to_owned());
    }
    let covered = hits
        .iter()
        .all(|(p, _, _)| text.contains(p.rsplit('/').next().unwrap_or(p)));
    let ev = Evidence::File {
        path: waiver.clone(),
        line: 0,
    };
    if !covered {
        return CheckResult::review(
            N,
            format!("{path}:{line} patches the serving stack ({what}); {waiver} does not name every patched file — a person must confirm it covers this patch."),
        )
        .file(&path, line)
        .with(ev);
    }
    CheckResult::pass(N, format!("patch covered by {waiver} (linked).")).with(ev)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::Outcome;
    use crate::checks::snapshot::{ChangedFile, Signoff};

    fn snap(patch: &str) -> Snapshot {
        let mut s = Snapshot::default();
        s.pr.number = 2428;
        s.files = vec![ChangedFile {
            path: "benchmarks/single_node/agentic/q_fp8_h200_mtp.sh".into(),
            status: "modified".into(),
            patch: Some(patch.into()),
            ..Default::default()
        }];
        s
    }

    const SED: &str = "@@ -130,1 +130,2 @@\n x\n+sed -i 's/a/b/' /sgl-workspace/sglang/python/sglang/srt/managers/multi_tokenizer_mixin.py\n";

    #[test]
    fn engine_edit_without_waiver_fails() {
        let r = check(&snap(SED), &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Fail);
        assert_eq!(
            r.reason,
            "benchmarks/single_node/agentic/q_fp8_h200_mtp.sh:131 patches the serving stack (an in-place edit of an engine path); no waiver (docs/waiver/2428.md is not added by this PR)."
        );
    }

    /// A FAIL row names its subject (the patching script), stable across
    /// line shifts, for fingerprints (issue 17 item 7).
    #[test]
    fn fail_rows_carry_a_subject() {
        let r = check(&snap(SED), &RepoConfig::default());
        assert_eq!(
            r.subject.as_deref(),
            Some("benchmarks/single_node/agentic/q_fp8_h200_mtp.sh")
        );
    }

    #[test]
    fn linked_complete_waiver_passes() {
        let mut s = snap(SED);
        s.files.push(ChangedFile {
            path: "docs/waiver/2428.md".into(),
            status: "added".into(),
            ..Default::default()
        });
        s.head_files.insert(
            "docs/waiver/2428.md".into(),
            "# 2428\n## Config covered\nq_fp8_h200_mtp.sh\n## What is patched\nx\n## Why the unmodified upstream image cannot run this benchmark\ny\n## Upstream PR / issue links\nhttps://github.com/sgl-project/sglang/pull/1\n## Removal plan\nz\n".into(),
        );
        s.signoff = Some(Signoff {
            body: "### Additional detail section:\n- waiver docs/waiver/2428.md\nSigned: a\n"
                .into(),
            ..Default::default()
        });
        let r = check(&s, &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Pass, "{}", r.reason);
        assert_eq!(r.reason, "patch covered by docs/waiver/2428.md (linked).");
    }

    /// `9688a10` (#2155): a workflow's prompt prose names `git apply`;
    /// only its steps' `run:` scripts run (`75b37f6`: a test job's torch
    /// install is no serving stack).
    #[test]
    fn workflow_prose_and_test_installs_are_not_patches() {
        let mut s = snap("@@ -1,1 +1,1 @@\n x\n");
        let wf = "jobs:\n  v:\n    steps:\n      - with:\n          prompt: |\n            - `git apply` / `patch` invocations;\n      - run: |\n          pip install torch\n";
        s.files = vec![ChangedFile {
            path: ".github/workflows/verify.yml".into(),
            status: "added".into(),
            patch: Some(format!(
                "@@ -0,0 +1,8 @@\n{}",
                wf.lines().map(|l| format!("+{l}\n")).collect::<String>()
            )),
            ..Default::default()
        }];
        s.head_files
            .insert(".github/workflows/verify.yml".into(), wf.into());
        let r = check(&s, &RepoConfig::default());
        assert_eq!(r.outcome, Outcome::Pass, "{}", r.reason);
        let mut s2 = s.clone();
        let wf2 = wf.replace("pip install torch", "git apply fix.patch");
        s2.head_files
            .insert(".github/workflows/verify.yml".into(), wf2.clone());
        s2.files[0].patch = Some(format!(
            "@@ -0,0 +1,8 @@\n{}",
            wf2.lines().map(|l| format!("+{l}\n")).collect::<String>()
        ));
        assert_eq!(check(&s2, &RepoConfig::default()).outcome, Outcome::Fail);
    }

    /// `24bc2d7` (#1572): `np.diff` in a README is no patch file.
    #[test]
    fn documents_are_not_patches() {
        let mut s = snap("@@ -1,1 +1,1 @@\n x\n");
        s.files = vec![ChangedFile {
            path: "benchmarks/multi_node/amd_utils/patches/README.md".into(),
            status: "added".into(),
            patch: Some("@@ -0,0 +1,1 @@\n+triggering an `np.diff` broadcasting error\n".into()),
            ..Default::default()
        }];
        assert_eq!(check(&s, &RepoConfig::default()).outcome, Outcome::Pass);
    }

    /// `a965c94` (#2508) adds its waiver; a local run has no sign-off to
    /// read the link from.
    #[test]
    fn an_added_waiver_without_a_sign_off_is_review() {
        let mut s = snap(SED);
        s.files.push(ChangedFile {
            path: "docs/waiver/2428.md".into(),
            status: "added".into(),
            ..Default::default()
        });
        s.head_files.insert(
            "docs/waiver/2428.md".into(),
            "## What is patched\n## Why the unmodified upstream image\n## Upstream PR / issue links\nhttps://github.com/a/b/pull/1\n## Removal plan\n".into(),
        );
        assert_eq!(check(&s, &RepoConfig::default()).outcome, Outcome::Review);
    }

    #[test]
    fn clean_diff_passes() {
        let r = check(
            &snap("@@ -1,1 +1,2 @@\n x\n+pip install grpcio==1.78.0\n"),
            &RepoConfig::default(),
        );
        assert_eq!(r.outcome, Outcome::Pass);
    }
}
