//! Edited comments: only commands that were not in the previous body run.
use super::parse::{ParsedLine, parse_comment};
use std::collections::HashMap;

/// The command lines of `current` that `previous` did not already have.
///
/// Lines are compared as a multiset of their normalized text, so re-ordering
/// or re-wrapping the comment runs nothing, fixing a typo (`/use 12x` →
/// `/use 12`) runs the fixed command, and adding a second identical `/use`
/// runs it once more. Errors count too, so an edit does not repeat an error
/// reply for a line that was already there.
pub fn new_in_edit(previous: &str, current: &str) -> Vec<ParsedLine> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    for p in parse_comment(previous) {
        *seen.entry(p.normalized).or_default() += 1;
    }
    parse_comment(current)
        .into_iter()
        .filter(|p| match seen.get_mut(&p.normalized) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(prev: &str, cur: &str) -> Vec<String> {
        new_in_edit(prev, cur)
            .into_iter()
            .map(|p| p.normalized)
            .collect()
    }

    #[test]
    fn unchanged_and_reordered_run_nothing() {
        assert!(texts("/use 1\n/verify", "/use 1\n/verify").is_empty());
        assert!(texts("/use 1\n\n/verify", "/verify\n\n/use  1").is_empty());
        assert!(texts("/use 1", "Thanks!\n\n/use 1\u{200B}").is_empty());
    }

    #[test]
    fn only_new_lines_run() {
        assert_eq!(texts("/use 1", "/use 1\n\n/use 2"), vec!["/use 2"]);
        assert_eq!(texts("/use 12x", "/use 12"), vec!["/use 12"]);
        assert_eq!(texts("/use 1", "/use 1\n\n/use 1"), vec!["/use 1"]);
        assert_eq!(texts("", "/help"), vec!["/help"]);
    }

    #[test]
    fn moving_a_command_out_of_a_code_block_runs_it() {
        assert_eq!(texts("```\n/verify\n```", "/verify"), vec!["/verify"]);
        assert!(texts("/verify", "```\n/verify\n```").is_empty());
    }
}
