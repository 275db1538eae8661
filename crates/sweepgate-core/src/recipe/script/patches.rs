//! Engine-source patching in a benchmark script (`docs/rules.md` §2 Check
//! 10 detection, §3 L23): one detection that serves both the verdict's
//! Check 10 and lint L23, so they judge a script alike.

use super::facts::{RewriteKind, ScriptFacts, SourceRewrite, is_engine_path};

/// One place where a script patches the serving stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PatchHit {
    pub line: usize,
    /// User-facing: what the script does (`patches `$SGLANG_MULTI_TOKENIZER``).
    pub what: String,
    /// Stable subject for fingerprints: the patched target, script or wheel.
    pub subject: String,
}

/// A target variable assigned from an engine path or a module's `__file__`.
fn target_is_engine(f: &ScriptFacts, r: &SourceRewrite) -> bool {
    r.touches_engine_path()
        || r.targets.iter().any(|t| {
            t.vars.iter().any(|v| {
                f.assignments.iter().filter(|a| &a.name == v).any(|a| {
                    let t = a.value_text();
                    is_engine_path(&t) || t.contains("__file__") || t.contains("find_spec")
                })
            })
        })
}

/// The nearest `cd` before `line` goes to a directory that is not an engine
/// path (nor a variable assigned from one).
fn cd_outside_engine(f: &ScriptFacts, line: usize) -> bool {
    let Some(cd) = f
        .commands
        .iter()
        .filter(|c| c.name == "cd" && c.line <= line)
        .max_by_key(|c| c.line)
    else {
        return false;
    };
    let Some(dir) = cd.args.first() else {
        return false;
    };
    if is_engine_path(&dir.text) {
        return false;
    }
    !dir.vars.iter().any(|v| {
        f.assignments
            .iter()
            .filter(|a| &a.name == v)
            .any(|a| is_engine_path(&a.value_text()) || a.value_text().contains("__file__"))
    })
}

/// The package a VCS requirement builds: its `#egg=` name, else the
/// repository's name (`git+https://github.com/flashinfer-ai/flashinfer.git@<sha>#egg=flashinfer-python`,
/// `5faba39^:benchmarks/70b_b200_slurm.sh:23`: an engine wheel built from a
/// commit is still an engine wheel).
fn vcs_name(spec: &str) -> Option<String> {
    let spec = spec.trim_matches(['"', '\'']);
    if !spec.starts_with("git+") {
        return None;
    }
    if let Some((_, egg)) = spec.split_once("#egg=") {
        return Some(egg.split('&').next().unwrap_or(egg).to_owned());
    }
    let url = spec.split('#').next().unwrap_or(spec);
    let repo = url.rsplit('/').next()?;
    let repo = repo.split('@').next().unwrap_or(repo);
    Some(repo.trim_end_matches(".git").to_owned())
}

/// Every patch of the serving stack in a script: in-place edits, copies
/// and heredocs into engine paths (followed through variables), `patch` /
/// `git apply`, `apply_*patch*.sh`, and engine wheels installed before the
/// server starts (`engine_wheels`, lint data).
pub(crate) fn engine_patches(f: &ScriptFacts, engine_wheels: &[String]) -> Vec<PatchHit> {
    let mut hits = Vec::new();
    for r in &f.rewrites {
        let engine = match r.kind {
            // `patch` / `git apply` change whatever the working directory
            // holds: the engine unless the script last changed into a
            // directory that is not an engine path (a launcher patching
            // its srt-slurm clone in `$SRT_REPO_DIR`).
            RewriteKind::Patch | RewriteKind::GitApply => !cd_outside_engine(f, r.line),
            _ => target_is_engine(f, r),
        };
        if engine {
            // An inline program names no target: quote it by what it is,
            // not by its whole source (`fa882f8`, #1188, quoted a
            // 90-line heredoc as the patched path).
            let (what, subject) = match r.targets.first() {
                Some(t) => (format!("patches `{}`", t.text), t.text.clone()),
                None => (
                    "edits installed packages with an inline program".to_owned(),
                    "inline program".to_owned(),
                ),
            };
            hits.push(PatchHit {
                line: r.line,
                what,
                subject,
            });
        }
    }
    for c in &f.commands {
        if matches!(c.name.as_str(), "bash" | "sh" | "source" | ".")
            && let Some(a) = c.args.first()
        {
            let base = a.text.rsplit('/').next().unwrap_or(&a.text);
            if base.starts_with("apply_") && base.contains("patch") {
                hits.push(PatchHit {
                    line: c.line,
                    what: format!("runs the patch script `{}`", a.text),
                    subject: base.to_owned(),
                });
            }
        }
    }
    let first_server = f.first_server_line();
    for inst in &f.installs {
        if first_server.is_some_and(|l| inst.line < l) {
            for r in &inst.requirements {
                if let Some(n) = r.name.clone().or_else(|| vcs_name(&r.spec))
                    && engine_wheels.iter().any(|w| w.eq_ignore_ascii_case(&n))
                {
                    hits.push(PatchHit {
                        line: r.line,
                        what: format!(
                            "installs the engine wheel `{}` before the server starts",
                            r.spec
                        ),
                        subject: n.to_ascii_lowercase(),
                    });
                }
            }
        }
    }
    hits.extend(source_builds(f, engine_wheels, first_server));
    hits.sort_by_key(|h| h.line);
    hits
}

/// The repository a `git clone` fetches, by name (`…/flashinfer.git` →
/// `flashinfer`).
fn clone_name(c: &super::facts::CommandFact) -> Option<String> {
    if c.name != "git" || c.args.first().is_none_or(|a| a.text != "clone") {
        return None;
    }
    let url = c.args.iter().skip(1).find(|a| !a.text.starts_with('-'))?;
    let last = url.text.trim_end_matches('/').rsplit('/').next()?;
    Some(last.trim_end_matches(".git").to_owned())
}

/// An engine built from its own source before the server starts: `git
/// clone` of an engine repository, then a local install (`pip install .`,
/// `-e .`). `418ebf0^:benchmarks/70b_b200_slurm.sh:26-30` built flashinfer
/// so; the PR turned it into a `git+…@<sha>` install of the same commit,
/// which must match the base's patch, not look new.
fn source_builds(
    f: &ScriptFacts,
    engine_wheels: &[String],
    first_server: Option<usize>,
) -> Vec<PatchHit> {
    use super::facts::RequirementKind;
    let mut hits = Vec::new();
    for c in &f.commands {
        if first_server.is_some_and(|l| c.line >= l) {
            continue;
        }
        let Some(repo) = clone_name(c) else { continue };
        if !engine_wheels.iter().any(|w| w.eq_ignore_ascii_case(&repo)) {
            continue;
        }
        let install = f
            .installs
            .iter()
            .filter(|i| i.line > c.line && first_server.is_none_or(|l| i.line < l))
            .flat_map(|i| &i.requirements)
            .find(|r| {
                matches!(
                    r.kind,
                    RequirementKind::LocalPath | RequirementKind::Editable
                )
            });
        if let Some(r) = install {
            hits.push(PatchHit {
                line: r.line,
                what: format!("builds the engine `{repo}` from a clone of its source"),
                subject: repo.to_ascii_lowercase(),
            });
        }
    }
    hits
}

/// What every engine patch of a script is, for matching base and head: any
/// patch matches any other, so a PR that swaps one modification of the
/// serving stack for another (a `sed -i` of `cubin_loader.py` for a pinned
/// flashinfer reinstall, `a694b09`; a wheel version for another,
/// `3fcf7b8`) keeps the modification the base already had. A patch beyond
/// the base's count is the PR's own. Lint L23 uses it as the finding's
/// identity; Check 10 splits with [`split_new`].
pub(crate) const PATCH_IDENTITY: &str = "modifies the serving stack";

/// The head's patches of a script split into the PR's own and the ones the
/// base already had, matched as a multiset by [`PATCH_IDENTITY`]: the
/// head's patches beyond the base's count are new, those on lines the PR
/// changed first.
pub(crate) fn split_new(
    base_count: usize,
    head: Vec<PatchHit>,
    changed: impl Fn(usize) -> bool,
) -> (Vec<PatchHit>, Vec<PatchHit>) {
    let n_new = head.len().saturating_sub(base_count);
    let (mut on_changed, mut rest): (Vec<_>, Vec<_>) =
        head.into_iter().partition(|h| changed(h.line));
    let mut new: Vec<PatchHit> = on_changed.drain(..n_new.min(on_changed.len())).collect();
    let more = n_new - new.len();
    new.extend(rest.drain(..more.min(rest.len())));
    let mut pre: Vec<PatchHit> = on_changed.into_iter().chain(rest).collect();
    new.sort_by_key(|h| h.line);
    pre.sort_by_key(|h| h.line);
    (new, pre)
}

#[cfg(test)]
mod split_tests {
    use super::*;

    fn hit(line: usize) -> PatchHit {
        PatchHit {
            line,
            what: String::new(),
            subject: String::new(),
        }
    }

    #[test]
    fn vcs_requirements_are_named() {
        assert_eq!(
            vcs_name(
                "git+https://github.com/flashinfer-ai/flashinfer.git@9720182#egg=flashinfer-python"
            )
            .as_deref(),
            Some("flashinfer-python")
        );
        assert_eq!(
            vcs_name("git+https://github.com/vllm-project/vllm.git@abc").as_deref(),
            Some("vllm")
        );
        assert_eq!(vcs_name("flashinfer-python==0.3.0"), None);
    }

    /// `418ebf0^:benchmarks/70b_b200_slurm.sh:25-30`: flashinfer built from
    /// a clone at a pinned commit; `418ebf0` turns it into a `git+…@<sha>`
    /// install of the same commit. Both are one engine patch each.
    #[test]
    fn an_engine_built_from_its_clone_is_a_patch_418ebf0() {
        let wheels = ["flashinfer".to_owned(), "flashinfer-python".to_owned()];
        let base = "#!/usr/bin/env bash\nhf download $MODEL\npip uninstall -y flashinfer-python\ngit clone --recursive https://github.com/flashinfer-ai/flashinfer.git\ngit checkout 9720182476ede910698f8d783c29b2ec91cec023\ncd flashinfer\npip install .\nvllm serve $MODEL --port $PORT\n";
        let head = "#!/usr/bin/env bash\nhf download $MODEL\npip install \"git+https://github.com/flashinfer-ai/flashinfer.git@9720182476ede910698f8d783c29b2ec91cec023#egg=flashinfer-python\"\nvllm serve $MODEL --port $PORT\n";
        let b = crate::recipe::script::parse_script("70b_b200_slurm.sh", base.as_bytes()).unwrap();
        let h = crate::recipe::script::parse_script("70b_b200_slurm.sh", head.as_bytes()).unwrap();
        let bh = engine_patches(&b, &wheels);
        assert_eq!(bh.len(), 1, "{bh:?}");
        assert_eq!((bh[0].line, bh[0].subject.as_str()), (7, "flashinfer"));
        let hh = engine_patches(&h, &wheels);
        assert_eq!(hh.len(), 1, "{hh:?}");
        let (new, pre) = split_new(bh.len(), hh, |l| l == 3);
        assert!(new.is_empty() && pre.len() == 1);
        // A clone of a repository that is not an engine is not a patch.
        let other = base.replace("flashinfer-ai/flashinfer.git", "org/tools.git");
        let o = crate::recipe::script::parse_script("x.sh", other.as_bytes()).unwrap();
        assert!(engine_patches(&o, &wheels).is_empty());
    }

    #[test]
    fn a_swapped_patch_is_the_bases_and_a_second_one_is_new() {
        let (new, pre) = split_new(1, vec![hit(27)], |l| l == 27);
        assert!(new.is_empty());
        assert_eq!(pre, vec![hit(27)]);
        let (new, pre) = split_new(1, vec![hit(5), hit(27)], |l| l == 27);
        assert_eq!((new, pre), (vec![hit(27)], vec![hit(5)]));
        let (new, _) = split_new(0, vec![hit(5)], |_| false);
        assert_eq!(new, vec![hit(5)]);
    }
}
