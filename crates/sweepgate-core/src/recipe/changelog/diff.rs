//! The line diff of two changelog revisions: what `git diff` reports as
//! removed and added lines, with insertions aligned on entry starts.

/// Lines with their terminators, so a last line without `\n` differs from
/// the same text with one, as in git.
pub(super) fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// Removed base line indices and added head line indices (0-based).
pub(super) struct LineDiff {
    pub(super) removed: Vec<usize>,
    pub(super) added: Vec<usize>,
}

/// Beyond this many edits the middle is treated as replaced wholesale;
/// such a diff fails the gate anyway (removed lines with content).
const MAX_EDITS: usize = 20_000;

pub(super) fn diff(a: &[&str], b: &[&str]) -> LineDiff {
    let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suf = a[pre..]
        .iter()
        .rev()
        .zip(b[pre..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[pre..a.len() - suf], &b[pre..b.len() - suf]);
    let mut out = LineDiff {
        removed: Vec::new(),
        added: Vec::new(),
    };
    if am.is_empty() || bm.is_empty() {
        out.removed.extend(pre..pre + am.len());
        out.added.extend(pre..pre + bm.len());
        return out;
    }
    match myers(am, bm) {
        Some((removed, added)) => {
            out.removed = removed.into_iter().map(|i| i + pre).collect();
            out.added = added.into_iter().map(|i| i + pre).collect();
        }
        None => {
            out.removed.extend(pre..pre + am.len());
            out.added.extend(pre..pre + bm.len());
        }
    }
    out
}

/// Myers' O((N+M)·D) shortest edit script; `None` past `MAX_EDITS`.
#[allow(clippy::type_complexity)]
fn myers(a: &[&str], b: &[&str]) -> Option<(Vec<usize>, Vec<usize>)> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = (n + m) as usize;
    let limit = max.min(MAX_EDITS) as isize;
    let off = max as isize + 1;
    let mut v = vec![0isize; 2 * max + 3];
    // snapshots[d] holds v[-d..=d] after step d.
    let mut snapshots: Vec<Vec<isize>> = Vec::new();
    let mut found = None;
    'outer: for d in 0..=limit {
        let mut k = -d;
        while k <= d {
            let idx = (k + off) as usize;
            let mut x = if k == -d || (k != d && v[idx - 1] < v[idx + 1]) {
                v[idx + 1]
            } else {
                v[idx - 1] + 1
            };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[idx] = x;
            if x >= n && y >= m {
                snapshots.push(v[(off - d) as usize..=(off + d) as usize].to_vec());
                found = Some(d);
                break 'outer;
            }
            k += 2;
        }
        snapshots.push(v[(off - d) as usize..=(off + d) as usize].to_vec());
    }
    let dmax = found?;
    let (mut removed, mut added) = (Vec::new(), Vec::new());
    let (mut x, mut y) = (n, m);
    for d in (1..=dmax).rev() {
        let prev = &snapshots[(d - 1) as usize];
        let at = |k: isize| prev[(k + d - 1) as usize];
        let k = x - y;
        let down = k == -d || (k != d && at(k - 1) < at(k + 1));
        let pk = if down { k + 1 } else { k - 1 };
        let px = at(pk);
        let py = px - pk;
        if down {
            added.push(py as usize);
        } else {
            removed.push(px as usize);
        }
        x = px;
        y = py;
    }
    removed.reverse();
    added.reverse();
    Some((removed, added))
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
