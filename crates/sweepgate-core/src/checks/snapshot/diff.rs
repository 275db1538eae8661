//! Unified-diff patches between two texts, as GitHub sends them (for a
//! snapshot assembled from files: the CLI and fixtures), by `crate::diff`.

use std::collections::{BTreeMap, BTreeSet};

use super::ChangedFile;

/// A unified-diff patch (hunks only, as GitHub sends them) from `base` to
/// `head`; `None` when they are equal.
pub(crate) fn unified_patch(base: &str, head: &str) -> Option<String> {
    if base == head {
        return None;
    }
    Some(crate::diff::unified(base, head, 3).patch)
}

/// Changed files between two file maps (added, removed, modified), with
/// patches, sorted by path.
pub fn diff_files(
    base: &BTreeMap<String, String>,
    head: &BTreeMap<String, String>,
) -> Vec<ChangedFile> {
    let mut out = Vec::new();
    let paths: BTreeSet<&String> = base.keys().chain(head.keys()).collect();
    for p in paths {
        let (status, patch) = match (base.get(p), head.get(p)) {
            (None, Some(h)) => ("added", unified_patch("", h)),
            (Some(b), None) => ("removed", unified_patch(b, "")),
            (Some(b), Some(h)) if b != h => ("modified", unified_patch(b, h)),
            _ => continue,
        };
        out.push(ChangedFile {
            path: p.clone(),
            previous_path: None,
            status: status.into(),
            patch,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::added_lines;

    #[test]
    fn patch_reports_added_lines_at_head_numbers() {
        let base = "a\nb\nc\nd\ne\nf\ng\n";
        let head = "a\nb\nc\nX\nd\ne\nf\ng\nY\n";
        let p = unified_patch(base, head).unwrap();
        let added = added_lines(&p);
        assert_eq!(added, vec![(4, "X"), (9, "Y")], "{p}");
    }

    #[test]
    fn new_file_patch_counts_every_line() {
        let p = unified_patch("", "x\ny\n").unwrap();
        assert_eq!(added_lines(&p), vec![(1, "x"), (2, "y")]);
    }
}
