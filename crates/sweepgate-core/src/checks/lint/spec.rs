//! Shared detections: speculative decoding (docs/rules.md §0.5), shell
//! branch conditions, and small text helpers.

use crate::recipe::script::{Arm, ArmKind};
use crate::recipe::srt::SrtRecipe;

/// The §0.5 markers of speculative decoding in a script or recipe.
const SPEC_MARKERS: [&str; 9] = [
    "--speculative-algorithm",
    "--speculative-algo",
    "--speculative-config",
    "speculative-config:",
    "num_speculative_tokens",
    "--num-speculative-tokens",
    "--speculative-num-steps",
    "speculative-algorithm:",
    "speculative-num-steps:",
];

/// Line of the first speculative-decoding marker, comment lines stripped
/// (`None`: the text does not use speculative decoding).
pub(crate) fn spec_line(text: &str) -> Option<(usize, String)> {
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if t.starts_with('#') {
            continue;
        }
        if let Some(m) = SPEC_MARKERS.iter().find(|m| line.contains(*m)) {
            return Some((i + 1, m.to_string()));
        }
        if (line.contains("speculative_config:") || line.contains("speculative_config."))
            && (text.contains("decoding_type") || text.contains("max_draft_len"))
        {
            return Some((i + 1, "speculative_config".into()));
        }
        if let Some(rest) = line.split("--method").nth(1) {
            let v = rest
                .trim_start_matches(['=', ' ', '"', '\''])
                .to_ascii_lowercase();
            if ["mtp", "eagle3", "eagle", "dspark"]
                .iter()
                .any(|m| v.starts_with(m))
            {
                return Some((i + 1, "--method".into()));
            }
        }
    }
    None
}

/// The recipe uses speculative decoding (its text, by §0.5).
pub(crate) fn recipe_uses_spec(r: &SrtRecipe, text: Option<&str>) -> bool {
    if let Some(t) = text
        && spec_line(t).is_some()
    {
        return true;
    }
    r.roles.iter().any(|role| {
        role.args.iter().any(|a| {
            a.key.starts_with("speculative")
                || a.key == "num-speculative-tokens"
                || a.key.contains("max_draft_len")
        })
    })
}

/// The script's file name says MTP (`…_mtp.sh`).
pub(crate) fn named_mtp(path: &str) -> bool {
    let stem = path
        .rsplit('/')
        .next()
        .unwrap_or(path)
        .trim_end_matches(".sh");
    stem.ends_with("_mtp") || stem.contains("_mtp_")
}

/// An arm that runs only when `EVAL_ONLY` is not `true`.
pub(crate) fn arm_not_eval(a: &Arm) -> bool {
    let c = a.condition.replace(' ', "");
    let names_eval = |s: &str| s.contains("EVAL_ONLY");
    match a.kind {
        ArmKind::If | ArmKind::Elif => {
            names_eval(&c)
                && (c.contains("!=")
                    || c.starts_with('!')
                    || c.contains("!=\"true\"")
                    || c.contains("-ne"))
        }
        ArmKind::Else => a.preceding.iter().any(|p| {
            names_eval(p)
                && (p.contains("==")
                    || p.replace(' ', "").contains("=\"true\"")
                    || p.contains(" = "))
                && !p.contains("!=")
        }),
        ArmKind::OrElse => names_eval(&c) && !c.contains("!="),
        ArmKind::AndThen => names_eval(&c) && c.contains("!="),
        _ => false,
    }
}

/// Some arm of the branch keeps `EVAL_ONLY=true` runs out.
pub(crate) fn gated_by_not_eval(branch: &[Arm]) -> bool {
    branch.iter().any(arm_not_eval)
}

/// 1-based line of the first line containing `needle` (comments skipped).
pub(crate) fn find_line(text: &str, needle: &str) -> Option<usize> {
    text.lines()
        .enumerate()
        .find(|(_, l)| !l.trim_start().starts_with('#') && l.contains(needle))
        .map(|(i, _)| i + 1)
}

/// `CONC` comparisons of an arm condition (`[ "$CONC" -gt 16 ]`), as a
/// predicate; `None` when the condition does not compare `CONC`.
pub(crate) fn conc_predicate(cond: &str) -> Option<Box<dyn Fn(i64) -> bool>> {
    let c = cond.replace(['"', '{', '}', '$', '[', ']', '(', ')'], " ");
    let words: Vec<&str> = c.split_whitespace().collect();
    let i = words.iter().position(|w| *w == "CONC")?;
    let op = *words.get(i + 1)?;
    let n: i64 = words.get(i + 2)?.parse().ok()?;
    let f: Box<dyn Fn(i64) -> bool> = match op {
        "-gt" | ">" => Box::new(move |x| x > n),
        "-ge" | ">=" => Box::new(move |x| x >= n),
        "-lt" | "<" => Box::new(move |x| x < n),
        "-le" | "<=" => Box::new(move |x| x <= n),
        "-eq" | "==" => Box::new(move |x| x == n),
        "-ne" | "!=" => Box::new(move |x| x != n),
        _ => return None,
    };
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_markers_skip_comments() {
        assert_eq!(spec_line("# --speculative-algorithm EAGLE\nfoo\n"), None);
        assert_eq!(
            spec_line("a\n  --speculative-algo EAGLE \\\n").map(|x| x.0),
            Some(2)
        );
        assert_eq!(spec_line("atom --method mtp\n").map(|x| x.0), Some(1));
        assert!(named_mtp(
            "benchmarks/single_node/fixed_seq_len/dsv4_fp4_b200_mtp.sh"
        ));
        assert!(!named_mtp(
            "benchmarks/single_node/fixed_seq_len/dsv4_fp4_b200.sh"
        ));
    }

    #[test]
    fn conc_conditions() {
        let p = conc_predicate("[ \"$CONC\" -gt 16 ]").unwrap();
        assert!(p(32) && !p(16));
        assert!(conc_predicate("[ \"$TP\" -gt 16 ]").is_none());
    }
}
