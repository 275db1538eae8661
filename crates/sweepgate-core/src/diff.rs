//! Line diffs, from one crate (`similar`, Myers' algorithm), for every
//! diff sweepgate computes: the changelog gate's removed and added lines,
//! the patches of a snapshot assembled from files (the CLI), and the
//! sandbox GitHub's compare and PR-files patches.
//!
//! Lines keep their terminators, so a last line without `\n` differs from
//! the same text with one, as in git. A common prefix and suffix are
//! trimmed first; a middle over [`MAX_MIDDLE`] lines is reported as
//! replaced wholesale (still a correct diff, and deterministic: no time
//! limit decides its shape).
use similar::{Algorithm, DiffOp, DiffTag};

/// The most differing lines (both sides) aligned line by line.
pub const MAX_MIDDLE: usize = 20_000;

/// Lines with their terminators.
pub fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// The operations turning `a` into `b`, in order (deletions before
/// insertions within a change, as git prints them).
pub fn ops(a: &[&str], b: &[&str]) -> Vec<DiffOp> {
    let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suf = a[pre..]
        .iter()
        .rev()
        .zip(b[pre..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[pre..a.len() - suf], &b[pre..b.len() - suf]);
    let mut out = Vec::new();
    if pre > 0 {
        out.push(DiffOp::Equal {
            old_index: 0,
            new_index: 0,
            len: pre,
        });
    }
    if am.len() + bm.len() <= MAX_MIDDLE {
        for op in similar::capture_diff_slices(Algorithm::Myers, am, bm) {
            out.push(shift(op, pre));
        }
    } else {
        out.push(DiffOp::Replace {
            old_index: pre,
            old_len: am.len(),
            new_index: pre,
            new_len: bm.len(),
        });
    }
    if suf > 0 {
        out.push(DiffOp::Equal {
            old_index: a.len() - suf,
            new_index: b.len() - suf,
            len: suf,
        });
    }
    out
}

fn shift(op: DiffOp, by: usize) -> DiffOp {
    match op {
        DiffOp::Equal {
            old_index,
            new_index,
            len,
        } => DiffOp::Equal {
            old_index: old_index + by,
            new_index: new_index + by,
            len,
        },
        DiffOp::Delete {
            old_index,
            old_len,
            new_index,
        } => DiffOp::Delete {
            old_index: old_index + by,
            old_len,
            new_index: new_index + by,
        },
        DiffOp::Insert {
            old_index,
            new_index,
            new_len,
        } => DiffOp::Insert {
            old_index: old_index + by,
            new_index: new_index + by,
            new_len,
        },
        DiffOp::Replace {
            old_index,
            old_len,
            new_index,
            new_len,
        } => DiffOp::Replace {
            old_index: old_index + by,
            old_len,
            new_index: new_index + by,
            new_len,
        },
    }
}

/// Removed line indexes of `a` and added line indexes of `b` (0-based).
pub fn changed_lines(a: &[&str], b: &[&str]) -> (Vec<usize>, Vec<usize>) {
    let (mut removed, mut added) = (Vec::new(), Vec::new());
    for op in ops(a, b) {
        if op.tag() == DiffTag::Equal {
            continue;
        }
        removed.extend(op.old_range());
        added.extend(op.new_range());
    }
    (removed, added)
}

/// A unified diff as GitHub sends it: hunks only (no `---`/`+++`
/// header), no trailing newline, `\ No newline at end of file` as git.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unified {
    pub patch: String,
    pub additions: usize,
    pub deletions: usize,
}

/// `start,len` of a hunk header (git's forms for 0 and 1 lines).
fn range(start0: usize, len: usize) -> String {
    match len {
        0 => format!("{start0},0"),
        1 => format!("{}", start0 + 1),
        n => format!("{},{n}", start0 + 1),
    }
}

/// The unified diff from `old` to `new` with `context` lines around each
/// change; an empty patch when they are equal.
pub fn unified(old: &str, new: &str, context: usize) -> Unified {
    let (a, b) = (lines(old), lines(new));
    let ops = ops(&a, &b);
    let mut out = Unified {
        patch: String::new(),
        additions: 0,
        deletions: 0,
    };
    for group in similar::group_diff_ops(ops, context) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let (old_from, old_to) = (first.old_range().start, last.old_range().end);
        let (new_from, new_to) = (first.new_range().start, last.new_range().end);
        let mut body = String::new();
        let mut line = |prefix: char, l: &str| {
            body.push(prefix);
            body.push_str(l.strip_suffix('\n').unwrap_or(l));
            body.push('\n');
            if !l.ends_with('\n') {
                body.push_str("\\ No newline at end of file\n");
            }
        };
        for op in &group {
            for i in op.old_range().filter(|_| op.tag() == DiffTag::Equal) {
                line(' ', a[i]);
            }
            if op.tag() != DiffTag::Equal {
                for i in op.old_range() {
                    line('-', a[i]);
                }
                for j in op.new_range() {
                    line('+', b[j]);
                }
                out.deletions += op.old_range().len();
                out.additions += op.new_range().len();
            }
        }
        if !out.patch.is_empty() {
            out.patch.push('\n');
        }
        // A side with no lines in the hunk names the line it follows.
        out.patch.push_str(&format!(
            "@@ -{} +{} @@\n",
            range(old_from, old_to - old_from),
            range(new_from, new_to - new_from)
        ));
        out.patch.push_str(body.strip_suffix('\n').unwrap_or(&body));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_changed_line() {
        let d = unified("a\nb\nc\nd\ne\n", "a\nb\nC\nd\ne\n", 3);
        assert_eq!(d.patch, "@@ -1,5 +1,5 @@\n a\n b\n-c\n+C\n d\n e");
        assert_eq!((d.additions, d.deletions), (1, 1));
    }

    #[test]
    fn added_file_removed_file_and_missing_newline() {
        let d = unified("", "x\ny", 3);
        assert_eq!(
            d.patch,
            "@@ -0,0 +1,2 @@\n+x\n+y\n\\ No newline at end of file"
        );
        assert_eq!(unified("x\n", "", 3).patch, "@@ -1 +0,0 @@\n-x");
        assert_eq!(unified("x\n", "x\n", 3).patch, "");
        // The last line gains its newline: a change, as git reports it.
        assert_eq!(
            unified("a\nb", "a\nb\n", 3).patch,
            "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b"
        );
    }

    #[test]
    fn distant_changes_make_two_hunks_and_pure_insertions_start_after_their_line() {
        let old: String = (1..=20).map(|i| format!("{i}\n")).collect();
        let new: String = (1..=20)
            .map(|i| match i {
                2 => "two\n".to_string(),
                18 => "eighteen\n".to_string(),
                _ => format!("{i}\n"),
            })
            .collect();
        let d = unified(&old, &new, 3);
        assert_eq!(d.patch.matches("@@ -").count(), 2, "{}", d.patch);
        assert!(
            d.patch.starts_with("@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n"),
            "{}",
            d.patch
        );
        assert!(d.patch.contains("@@ -15,6 +15,6 @@"), "{}", d.patch);
        let d = unified("a\nb\nc\nd\ne\nf\ng\nh\n", "a\nb\nc\nd\nX\ne\nf\ng\nh\n", 0);
        assert_eq!(d.patch, "@@ -4,0 +5 @@\n+X");
    }

    #[test]
    fn changed_lines_and_the_wholesale_bound() {
        let (a, b) = (lines("a\nb\nc\n"), lines("a\nB\nc\nd\n"));
        assert_eq!(changed_lines(&a, &b), (vec![1], vec![1, 3]));
        let big_a: Vec<String> = (0..MAX_MIDDLE).map(|i| format!("a{i}\n")).collect();
        let big_b: Vec<String> = (0..MAX_MIDDLE).map(|i| format!("b{i}\n")).collect();
        let a: Vec<&str> = big_a.iter().map(String::as_str).collect();
        let b: Vec<&str> = big_b.iter().map(String::as_str).collect();
        let (r, ad) = changed_lines(&a, &b);
        assert_eq!((r.len(), ad.len()), (MAX_MIDDLE, MAX_MIDDLE));
    }
}
