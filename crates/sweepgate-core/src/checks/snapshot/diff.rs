//! Unified-diff patches between two texts, as GitHub sends them (for a
//! snapshot assembled from files: the CLI and fixtures).

use std::collections::{BTreeMap, BTreeSet};

use super::ChangedFile;

/// A unified-diff patch (hunks only, as GitHub sends them) from `base` to
/// `head`; `None` when they are equal.
pub(crate) fn unified_patch(base: &str, head: &str) -> Option<String> {
    if base == head {
        return None;
    }
    let a: Vec<&str> = base.lines().collect();
    let b: Vec<&str> = head.lines().collect();
    let pre = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let max_suf = a.len().min(b.len()) - pre;
    let suf = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(max_suf)
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[pre..a.len() - suf], &b[pre..b.len() - suf]);
    // LCS on the middle (small for real edits; bounded for safety).
    let ops = if am.len() * bm.len() <= 4_000_000 {
        lcs_ops(am, bm)
    } else {
        let mut v: Vec<Op> = am.iter().map(|_| Op::Del).collect();
        v.extend(bm.iter().map(|_| Op::Add));
        v
    };
    let ctx_start = pre.saturating_sub(3);
    let mut body = String::new();
    for l in &a[ctx_start..pre] {
        body.push(' ');
        body.push_str(l);
        body.push('\n');
    }
    let (mut i, mut j) = (0usize, 0usize);
    let mut old_n = pre - ctx_start;
    let mut new_n = old_n;
    for op in ops {
        match op {
            Op::Keep => {
                body.push(' ');
                body.push_str(am[i]);
                i += 1;
                j += 1;
                old_n += 1;
                new_n += 1;
            }
            Op::Del => {
                body.push('-');
                body.push_str(am[i]);
                i += 1;
                old_n += 1;
            }
            Op::Add => {
                body.push('+');
                body.push_str(bm[j]);
                j += 1;
                new_n += 1;
            }
        }
        body.push('\n');
    }
    let tail_end = (a.len() - suf + 3).min(a.len());
    for l in &a[a.len() - suf..tail_end] {
        body.push(' ');
        body.push_str(l);
        body.push('\n');
        old_n += 1;
        new_n += 1;
    }
    Some(format!(
        "@@ -{},{} +{},{} @@\n{}",
        ctx_start + 1,
        old_n,
        ctx_start + 1,
        new_n,
        body
    ))
}

#[derive(Clone, Copy)]
enum Op {
    Keep,
    Del,
    Add,
}

fn lcs_ops(a: &[&str], b: &[&str]) -> Vec<Op> {
    let (n, m) = (a.len(), b.len());
    let mut t = vec![0u32; (n + 1) * (m + 1)];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            t[i * (m + 1) + j] = if a[i] == b[j] {
                t[(i + 1) * (m + 1) + j + 1] + 1
            } else {
                t[(i + 1) * (m + 1) + j].max(t[i * (m + 1) + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(n + m);
    while i < n && j < m {
        if a[i] == b[j] {
            out.push(Op::Keep);
            i += 1;
            j += 1;
        } else if t[(i + 1) * (m + 1) + j] >= t[i * (m + 1) + j + 1] {
            out.push(Op::Del);
            i += 1;
        } else {
            out.push(Op::Add);
            j += 1;
        }
    }
    out.extend((i..n).map(|_| Op::Del));
    out.extend((j..m).map(|_| Op::Add));
    out
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
