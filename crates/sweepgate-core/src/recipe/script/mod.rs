//! Static facts of a benchmark shell script, read from a real bash syntax
//! tree (tree-sitter-bash). Nothing is executed: the script is PR content.
//!
//! The facts are what the recipe lints (L06–L12, L21–L23, L26) and checks
//! 8–11 and 13 consume: server launches with their flags, the benchmark
//! client calls, environment exports and command-prefix variables, shell
//! assignments and expansions with the `if`/`case` arm they sit in, package
//! installs with their requirement specs, source-rewriting commands and
//! heredocs, and the variables `check_env_vars` requires.
//!
//! Comments are not facts (the syntax tree drops them), so "strip comment
//! lines before matching" holds by construction. Backslash continuations are
//! whitespace to the grammar, so a continued command is one command with the
//! line of each argument kept.

mod args;
mod chat;
mod facts;
mod install;
mod patches;
mod quote;
mod walker;

use walker::line_of;

use tree_sitter::{Node, Parser};

use super::{Loc, ParseError};

/// Deeper nesting than this is not walked (guards the stack on hostile input).
const MAX_DEPTH: usize = 200;
/// How many levels of `"${ARGS[@]}"` inside arrays are followed.
const MAX_SPLAT_DEPTH: usize = 8;

pub(crate) use chat::{ChatUse, chat_use};
pub use facts::*;
pub(crate) use patches::{PATCH_IDENTITY, engine_patches, split_new};

/// tree-sitter-bash's external scanner reads out of bounds on characters
/// far outside the Basic Multilingual Plane (`{` then U+E0000 crashes the
/// process): every character above U+FFFF becomes as many `_` as its UTF-8
/// bytes, so byte offsets and lines stay exact.
fn scanner_safe(src: std::borrow::Cow<'_, str>) -> std::borrow::Cow<'_, str> {
    if src.chars().all(|c| (c as u32) <= 0xFFFF) {
        return src;
    }
    src.chars()
        .map(|c| {
            if (c as u32) > 0xFFFF {
                "_".repeat(c.len_utf8())
            } else {
                c.to_string()
            }
        })
        .collect::<String>()
        .into()
}

/// Read the facts of one script. Fails only when the grammar cannot run;
/// syntax errors in the script are recovered from and listed in
/// [`ScriptFacts::syntax_errors`].
pub fn parse_script(path: &str, bytes: &[u8]) -> Result<ScriptFacts, ParseError> {
    let src = scanner_safe(String::from_utf8_lossy(bytes));
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .map_err(|e| ParseError::new(Loc::new(path, 1, 1), format!("bash grammar: {e}")))?;
    let tree = parser
        .parse(src.as_bytes(), None)
        .ok_or_else(|| ParseError::new(Loc::new(path, 1, 1), "bash parser returned no tree"))?;
    let mut facts = walker::walk(&src, path, tree.root_node());
    if tree.root_node().has_error() {
        facts.syntax_errors.extend(error_lines(tree.root_node()));
        facts.syntax_errors.sort_unstable();
        facts.syntax_errors.dedup();
    }
    Ok(facts)
}

/// Lines of every ERROR or MISSING node (iterative: no recursion on deep trees).
fn error_lines(root: Node) -> Vec<usize> {
    let mut out = Vec::new();
    let mut cursor = root.walk();
    loop {
        let n = cursor.node();
        if n.is_error() || n.is_missing() {
            out.push(line_of(n));
        }
        if n.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return out;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::install::classify_requirement;
    use super::*;

    fn facts(src: &str) -> ScriptFacts {
        parse_script("t.sh", src.as_bytes()).unwrap()
    }

    #[test]
    fn continued_vllm_command_joins_flags_with_lines() {
        let f = facts(
            "vllm serve \"$MODEL\" \\\n  --tensor-parallel-size=$TP \\\n  --max-num-seqs 512 \\\n  --trust-remote-code &\n",
        );
        assert_eq!(f.servers.len(), 1);
        let s = &f.servers[0];
        assert_eq!(s.engine, Engine::Vllm);
        assert_eq!(s.positionals[0].text, "$MODEL");
        let tp = s.flag("--tensor-parallel-size").unwrap();
        assert_eq!(
            (tp.form, tp.line, tp.value_text()),
            (FlagForm::Equals, 2, Some("$TP"))
        );
        let seqs = s.flag("--max-num-seqs").unwrap();
        assert_eq!(
            (seqs.form, seqs.line, seqs.value_text()),
            (FlagForm::Separate, 3, Some("512"))
        );
        assert_eq!(s.flag("--trust-remote-code").unwrap().form, FlagForm::Bare);
    }

    #[test]
    fn branches_and_exclusivity() {
        let f = facts(
            "if [ \"$CONC\" -le 8 ]; then\n  K=7\nelif [ \"$CONC\" -le 16 ]; then\n  K=3\nelse\n  K=0\nfi\necho $K\n",
        );
        let ks: Vec<&Assignment> = f.assignments.iter().filter(|a| a.name == "K").collect();
        assert_eq!(ks.len(), 3);
        assert_eq!(ks[0].branch[0].kind, ArmKind::If);
        assert_eq!(ks[1].branch[0].kind, ArmKind::Elif);
        assert_eq!(ks[2].branch[0].kind, ArmKind::Else);
        assert_eq!(ks[2].branch[0].preceding.len(), 2);
        assert!(exclusive(&ks[0].branch, &ks[1].branch));
        assert!(!exclusive(&ks[0].branch, &[]));
        assert_eq!(f.candidates("K", 8, &[]).len(), 3);
    }

    #[test]
    fn requirement_kinds() {
        let w = |t: &str| Word {
            raw: t.into(),
            text: t.into(),
            line: 1,
            column: 1,
            vars: vec![],
            quoted: false,
            splat: None,
        };
        assert_eq!(
            classify_requirement(&w("triton==3.7.0")).kind,
            RequirementKind::Pinned
        );
        assert_eq!(
            classify_requirement(&w("lm_eval[api]==0.4.12")).kind,
            RequirementKind::Pinned
        );
        let r = classify_requirement(&w("fastokens>=0.1.1,<0.2.0"));
        assert_eq!(
            (r.kind, r.name.as_deref()),
            (RequirementKind::Unpinned, Some("fastokens"))
        );
        assert_eq!(
            classify_requirement(&w("sentencepiece")).kind,
            RequirementKind::Unpinned
        );
        assert_eq!(
            classify_requirement(&w("git+https://github.com/LMCache/LMCache.git@9229067c0a1b2c3d4e5f60718293a4b5c6d7e8f9")).kind,
            RequirementKind::GitCommit
        );
        assert_eq!(
            classify_requirement(&w("git+https://github.com/x/y.git@main")).kind,
            RequirementKind::Unpinned
        );
        assert_eq!(
            classify_requirement(&w("vllm==0.*")).kind,
            RequirementKind::Unpinned
        );
    }

    #[test]
    fn engine_paths() {
        assert!(is_engine_path(
            "/sgl-workspace/sglang/python/sglang/srt/managers/multi_tokenizer_mixin.py"
        ));
        assert!(is_engine_path(
            "/usr/local/lib/python3.12/dist-packages/vllm/x.py"
        ));
        assert!(is_engine_path("/usr/local/lib/python3.12/vllm/x.py"));
        assert!(!is_engine_path("/workspace/server.log"));
    }
}
