//! The line diff of two changelog revisions: what `git diff` reports as
//! removed and added lines (`crate::diff`), with insertions aligned on
//! entry starts.

pub(super) use crate::diff::lines;

/// Removed base line indices and added head line indices (0-based).
pub(super) struct LineDiff {
    pub(super) removed: Vec<usize>,
    pub(super) added: Vec<usize>,
}

/// The line diff (`crate::diff`); a middle too large to align is replaced
/// wholesale, which fails the gate anyway (removed lines with content).
pub(super) fn diff(a: &[&str], b: &[&str]) -> LineDiff {
    let (removed, added) = crate::diff::changed_lines(a, b);
    LineDiff { removed, added }
}

/// Slides each run of added lines over equal neighbouring lines so that it
/// starts at an entry (`- …` at column 0) where it can, as git's indent
/// heuristic does; otherwise an inserted entry can be reported as starting
/// mid-entry and its added lines would not parse.
pub(super) fn align_insertions(added: &mut [usize], head: &[&str]) {
    let mut i = 0;
    while i < added.len() {
        let mut j = i + 1;
        while j < added.len() && added[j] == added[j - 1] + 1 {
            j += 1;
        }
        let (s, e) = (added[i], added[j - 1] + 1);
        // How far the run may move: up while the line above equals the run's
        // last line, down while the line below equals its first.
        let floor = if i > 0 { added[i - 1] + 1 } else { 0 };
        let mut up = 0;
        while s - up > floor && head[s - up - 1] == head[e - up - 1] {
            up += 1;
        }
        let next = added.get(j).copied().unwrap_or(head.len());
        let mut down = 0;
        while e + down < next && head[e + down] == head[s + down] {
            down += 1;
        }
        if up + down > 0 {
            let starts_entry = |start: usize| head[start].starts_with("- ");
            let best = (s - up..=s + down)
                .rev()
                .find(|&st| starts_entry(st))
                .or_else(|| {
                    (s - up..=s + down)
                        .rev()
                        .find(|&st| st > 0 && head[st - 1].trim().is_empty())
                })
                .unwrap_or(s + down);
            for (k, slot) in added[i..j].iter_mut().enumerate() {
                *slot = best + k;
            }
        }
        i = j;
    }
}
