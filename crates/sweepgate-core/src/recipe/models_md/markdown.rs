//! What is written in MODELS.md's cells and headings: dates, PR numbers,
//! lists and targets (the tables and headings themselves come from
//! `crate::markdown`).

use chrono::NaiveDate;

use super::model::{Scenario, Target};

pub(super) use crate::markdown::Table;

pub(super) fn header_is(t: &Table, want: &[&str]) -> bool {
    t.header.len() >= want.len()
        && t.header
            .iter()
            .zip(want)
            .all(|(h, w)| h.to_ascii_lowercase().starts_with(&w.to_ascii_lowercase()))
}

pub(super) fn backticked(s: &str) -> Vec<String> {
    s.split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, t)| t.to_owned())
        .filter(|t| !t.is_empty())
        .collect()
}

/// The first `YYYY-MM-DD` in `s`.
pub(super) fn find_date(s: &str) -> Option<NaiveDate> {
    let b = s.as_bytes();
    (0..b.len().saturating_sub(9)).find_map(|i| {
        let w = &b[i..i + 10];
        let shape = w.iter().enumerate().all(|(j, c)| match j {
            4 | 7 => *c == b'-',
            _ => c.is_ascii_digit(),
        });
        if !shape {
            return None;
        }
        NaiveDate::parse_from_str(std::str::from_utf8(w).ok()?, "%Y-%m-%d").ok()
    })
}

/// The first `#<digits>` in `s`.
pub(super) fn find_pr(s: &str) -> Option<u64> {
    let i = s.find('#')?;
    let digits: String = s[i + 1..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok().or_else(|| find_pr(&s[i + 1..]))
}

/// "Monday, August 3, 2026" (the weekday is optional).
pub(super) fn heading_date(s: &str) -> Option<NaiveDate> {
    let s = s.trim().trim_matches('*').trim();
    NaiveDate::parse_from_str(s, "%A, %B %d, %Y")
        .ok()
        .or_else(|| {
            let rest = s.split_once(", ").map_or(s, |(_, r)| r);
            NaiveDate::parse_from_str(rest, "%B %d, %Y").ok()
        })
}

/// Splits on commas outside parentheses.
pub(super) fn split_top_commas(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth <= 0 => {
                out.push(std::mem::take(&mut cur).trim().to_owned());
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur.trim().to_owned());
    out.retain(|x| !x.is_empty());
    out
}

/// "Single-turn 8k1k and Agentic coding, both …" → the two scenario texts.
pub(super) fn split_and(s: &str) -> Vec<&str> {
    let head = s.split(" (").next().unwrap_or(s);
    let head = head.split(", ").next().unwrap_or(head);
    head.split(" and ").map(str::trim).collect()
}

/// "MiniMax-M3 (`minimaxm3`)" → ("MiniMax-M3", "minimaxm3").
pub(super) fn model_cell(s: &str) -> (String, Option<String>) {
    let prefix = backticked(s).into_iter().next();
    let name = s.split(" (`").next().unwrap_or(s).trim().to_owned();
    (name, prefix)
}

pub(super) fn classify_target(text: &str) -> Target {
    let plain = text.replace("**", "");
    let lower = plain.to_ascii_lowercase();
    if lower.contains(" recipes")
        && lower.starts_with("all ")
        && let Some(p) = plain.split_whitespace().nth(1)
    {
        return Target::Precision(p.to_owned());
    }
    if let Some((scen, arm)) = plain.split_once(", non-")
        && let Some(scenario) = Scenario::parse(scen)
    {
        let arm = arm.split(" (").next().unwrap_or(arm).trim();
        return Target::NonSpecArm {
            scenario,
            arm: format!("non-{arm}"),
        };
    }
    match Scenario::parse(&plain) {
        Some(s) => Target::Scenario(s),
        None => Target::Other(plain.trim().to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recipe::models_md::d;

    #[test]
    fn headings_and_cells() {
        assert_eq!(
            heading_date("Monday, August 3, 2026"),
            Some(d("2026-08-03"))
        );
        assert_eq!(
            split_top_commas(
                "Single-turn 1k1k, Single-turn 1k8k (GLM-5 only), Agentic coding (removed 2026-08-04, [#2493](u))"
            ),
            vec![
                "Single-turn 1k1k",
                "Single-turn 1k8k (GLM-5 only)",
                "Agentic coding (removed 2026-08-04, [#2493](u))"
            ]
        );
        assert_eq!(
            find_pr("since 2026-07-17 ([#2263](https://x/pull/2263))"),
            Some(2263)
        );
    }
}
