//! `MODELS.md` (English only; `MODELS_zh.md` is a translation and is not
//! read): scenarios, dated deprecations, the model support matrix and the
//! engine submission policy.
//!
//! A deprecation notice is headed by its *last day*; it takes effect the
//! next day. Lookups take the date as an argument: the clock belongs to the
//! caller.

use chrono::{Days, NaiveDate};

use super::{Loc, ParseError};

/// A benchmark scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scenario {
    AgenticCoding,
    /// Fixed sequence length, `isl`/`osl` in tokens.
    Fixed {
        isl: u32,
        osl: u32,
    },
}

impl Scenario {
    /// Reads "Agentic coding", "Single-turn 8k1k", "8k1k", "1k8k", ….
    pub(crate) fn parse(text: &str) -> Option<Scenario> {
        let t = text.trim().trim_matches('*').trim();
        let lower = t.to_ascii_lowercase();
        if lower.starts_with("agentic coding") || lower == "agentic-coding" {
            return Some(Scenario::AgenticCoding);
        }
        let name = lower.strip_prefix("single-turn ").unwrap_or(&lower);
        let name = name.split_whitespace().next()?;
        let (i, o) = name.split_once('k')?;
        let o = o.strip_suffix('k')?;
        let isl = i.parse::<u32>().ok()?.checked_mul(1024)?;
        let osl = o.parse::<u32>().ok()?.checked_mul(1024)?;
        Some(Scenario::Fixed { isl, osl })
    }

    /// `8192/1024` is 8k1k and so on.
    #[cfg(test)]
    fn from_isl_osl(isl: u32, osl: u32) -> Scenario {
        Scenario::Fixed { isl, osl }
    }

    /// "Single-turn 8k1k" / "Agentic coding".
    #[cfg(test)]
    fn name(&self) -> String {
        match *self {
            Scenario::AgenticCoding => "Agentic coding".to_owned(),
            Scenario::Fixed { isl, osl } if isl % 1024 == 0 && osl % 1024 == 0 => {
                format!("Single-turn {}k{}k", isl / 1024, osl / 1024)
            }
            Scenario::Fixed { isl, osl } => format!("Single-turn {isl}/{osl}"),
        }
    }
}

/// What a deprecation retires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Scenario(Scenario),
    /// Every recipe of a precision (`bf16`), in every scenario.
    Precision(String),
    /// The non-spec-decode arm of a scenario (A/B retirement); `arm` is the
    /// text as written ("non-MTP").
    NonSpecArm {
        scenario: Scenario,
        arm: String,
    },
    /// The whole model (retired: no active scenario left).
    Model,
    /// Text the parser could not classify.
    Other(String),
}

/// Whether a deprecation has been carried out in the master configs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enactment {
    /// Announced; nothing says whether it was carried out.
    Announced,
    Enacted(NaiveDate),
    /// The text says "not yet enacted".
    NotYetEnacted,
}

/// Where a deprecation is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A table or sentence of the Deprecation Notice.
    Notice,
    /// The Scenarios table ("Deprecated for all models since …").
    Scenarios,
    /// The support matrix ("None (retired …)").
    Matrix,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deprecation {
    pub line: usize,
    /// `None`: every model.
    pub prefix: Option<String>,
    /// Display name as written ("MiniMax-M3").
    pub model: Option<String>,
    pub target: Target,
    /// The date in the notice heading (the last day it still runs).
    pub last_day: Option<NaiveDate>,
    /// The first day it applies; `None` when it applies from the model's
    /// first day ("deprecated from day 0").
    pub effective: Option<NaiveDate>,
    pub status: Enactment,
    pub origin: Origin,
    /// What remains or is published instead, as written.
    pub remains: Option<String>,
}

impl Deprecation {
    /// In force on `on` (enacted or not: callers decide what "not yet
    /// enacted" means for them).
    pub(crate) fn in_force(&self, on: NaiveDate) -> bool {
        self.effective.is_none_or(|d| d <= on)
    }

    fn applies_to(&self, prefix: &str) -> bool {
        self.prefix.as_deref().is_none_or(|p| p == prefix)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScenarioStatus {
    Active,
    DeprecatedSince(NaiveDate),
    /// Status text the parser could not read.
    Unknown(String),
}

/// A row of the Scenarios table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioRow {
    pub line: usize,
    pub name: String,
    pub scenario: Option<Scenario>,
    /// `(isl, osl)` when the cell is numeric.
    pub isl_osl: Option<(u32, u32)>,
    pub status: ScenarioStatus,
    pub pr: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Added {
    Date { date: NaiveDate, pr: Option<u64> },
    Tbd,
    Unparsed(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Active {
    /// `None (retired YYYY-MM-DD, …)`.
    Retired {
        date: Option<NaiveDate>,
        pr: Option<u64>,
    },
    /// Scenario texts with their qualifiers ("Agentic coding (DSpark only)").
    Scenarios(Vec<String>),
}

/// A row of the model support matrix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRow {
    pub line: usize,
    pub class: String,
    pub prefixes: Vec<String>,
    pub added: Added,
    pub active: Active,
    pub deprecated: Vec<String>,
}

impl ModelRow {
    pub fn is_retired(&self) -> bool {
        matches!(self.active, Active::Retired { .. })
    }

    /// Whether an active scenario of the row is `scenario` (qualifiers such
    /// as "(DSpark only)" are kept in the text, not judged here).
    pub fn lists_active(&self, scenario: Scenario) -> bool {
        match &self.active {
            Active::Retired { .. } => false,
            Active::Scenarios(list) => list.iter().any(|s| {
                split_and(s)
                    .iter()
                    .any(|part| Scenario::parse(part) == Some(scenario))
            }),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Vllm,
    Sglang,
}

/// A row of the engine submission policy table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnginePolicy {
    pub line: usize,
    pub model: String,
    pub prefix: String,
    pub primary: Vec<Engine>,
    /// Backticked draft model ids of the agreed (PoR) column.
    pub agreed_drafts: Vec<String>,
    pub agreed_text: String,
    pub proposed: String,
    pub additional: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelsMd {
    pub file: String,
    pub scenarios: Vec<ScenarioRow>,
    pub deprecations: Vec<Deprecation>,
    pub matrix: Vec<ModelRow>,
    pub engine_policy: Vec<EnginePolicy>,
    /// Hardware named in the brand-new-SKU exception of the engine policy.
    pub new_hardware_exceptions: Vec<String>,
}

impl ModelsMd {
    /// The matrix row that lists `prefix`.
    pub fn model(&self, prefix: &str) -> Option<&ModelRow> {
        self.matrix
            .iter()
            .find(|r| r.prefixes.iter().any(|p| p == prefix))
    }

    pub fn policy(&self, prefix: &str) -> Option<&EnginePolicy> {
        self.engine_policy.iter().find(|p| p.prefix == prefix)
    }

    /// Deprecations of `prefix` (or of every model) in force on `on`.
    pub fn deprecations_on<'a>(
        &'a self,
        prefix: &'a str,
        on: NaiveDate,
    ) -> impl Iterator<Item = &'a Deprecation> + 'a {
        self.deprecations
            .iter()
            .filter(move |d| d.applies_to(prefix) && d.in_force(on))
    }

    /// The first deprecation in force on `on` that retires this launch: the
    /// whole model, its scenario, its precision, or (when it does not use
    /// speculative decoding) the non-spec arm of its scenario.
    pub fn deprecation_for(
        &self,
        prefix: &str,
        scenario: Scenario,
        precision: &str,
        uses_spec_decoding: bool,
        on: NaiveDate,
    ) -> Option<&Deprecation> {
        let in_force = |d: &&Deprecation| d.applies_to(prefix) && d.in_force(on);
        self.deprecations
            .iter()
            .filter(in_force)
            .find(|d| match &d.target {
                Target::Model => true,
                Target::Scenario(s) => *s == scenario,
                Target::Precision(p) => p.eq_ignore_ascii_case(precision),
                Target::NonSpecArm { scenario: s, .. } => *s == scenario && !uses_spec_decoding,
                Target::Other(_) => false,
            })
    }
}

// ---------------------------------------------------------------------
// Markdown scaffolding.

struct Table {
    header: Vec<String>,
    rows: Vec<(usize, Vec<String>)>,
    /// Index in `lines` just past the table.
    end: usize,
}

/// Splits a table row on `|` outside backticks (`\|` is literal).
fn cells(line: &str) -> Vec<String> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut code = false;
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cur.push('|');
                chars.next();
            }
            '`' => {
                code = !code;
                cur.push(c);
            }
            '|' if !code => out.push(std::mem::take(&mut cur).trim().to_owned()),
            _ => cur.push(c),
        }
    }
    out.push(cur.trim().to_owned());
    out
}

fn is_separator(line: &str) -> bool {
    let t = line.trim();
    t.starts_with('|') && t.contains('-') && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
}

/// The table starting at `lines[i]`, if one does.
fn table_at(lines: &[&str], i: usize) -> Option<Table> {
    let head = lines.get(i)?;
    if !head.trim_start().starts_with('|') || !lines.get(i + 1).is_some_and(|l| is_separator(l)) {
        return None;
    }
    let mut rows = Vec::new();
    let mut j = i + 2;
    while let Some(l) = lines.get(j) {
        if !l.trim_start().starts_with('|') {
            break;
        }
        rows.push((j + 1, cells(l)));
        j += 1;
    }
    Some(Table {
        header: cells(head),
        rows,
        end: j,
    })
}

fn header_is(t: &Table, want: &[&str]) -> bool {
    t.header.len() >= want.len()
        && t.header
            .iter()
            .zip(want)
            .all(|(h, w)| h.to_ascii_lowercase().starts_with(&w.to_ascii_lowercase()))
}

fn backticked(s: &str) -> Vec<String> {
    s.split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, t)| t.to_owned())
        .filter(|t| !t.is_empty())
        .collect()
}

/// The first `YYYY-MM-DD` in `s`.
fn find_date(s: &str) -> Option<NaiveDate> {
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
fn find_pr(s: &str) -> Option<u64> {
    let i = s.find('#')?;
    let digits: String = s[i + 1..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok().or_else(|| find_pr(&s[i + 1..]))
}

/// "Monday, August 3, 2026" (the weekday is optional).
fn heading_date(s: &str) -> Option<NaiveDate> {
    let s = s.trim().trim_matches('*').trim();
    NaiveDate::parse_from_str(s, "%A, %B %d, %Y")
        .ok()
        .or_else(|| {
            let rest = s.split_once(", ").map_or(s, |(_, r)| r);
            NaiveDate::parse_from_str(rest, "%B %d, %Y").ok()
        })
}

/// Splits on commas outside parentheses.
fn split_top_commas(s: &str) -> Vec<String> {
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
fn split_and(s: &str) -> Vec<&str> {
    let head = s.split(" (").next().unwrap_or(s);
    let head = head.split(", ").next().unwrap_or(head);
    head.split(" and ").map(str::trim).collect()
}

/// "MiniMax-M3 (`minimaxm3`)" → ("MiniMax-M3", "minimaxm3").
fn model_cell(s: &str) -> (String, Option<String>) {
    let prefix = backticked(s).into_iter().next();
    let name = s.split(" (`").next().unwrap_or(s).trim().to_owned();
    (name, prefix)
}

fn classify_target(text: &str) -> Target {
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

// ---------------------------------------------------------------------

pub fn parse(file: &str, bytes: &[u8]) -> Result<ModelsMd, ParseError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let before = &bytes[..e.valid_up_to()];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let col = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
        ParseError::new(Loc::new(file, line, col), "MODELS.md is not valid UTF-8")
    })?;
    let lines: Vec<&str> = text.lines().collect();
    let mut md = ModelsMd {
        file: file.to_owned(),
        scenarios: Vec::new(),
        deprecations: Vec::new(),
        matrix: Vec::new(),
        engine_policy: Vec::new(),
        new_hardware_exceptions: Vec::new(),
    };

    // Section state.
    let mut h2 = String::new();
    let mut notice_day: Option<(NaiveDate, usize)> = None;
    let mut notice_enacted: Option<NaiveDate> = None;
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if let Some(h) = l.strip_prefix("## ") {
            h2 = h.trim().to_owned();
            notice_day = None;
            i += 1;
            continue;
        }
        if let Some(h) = l.strip_prefix("### ") {
            notice_day = None;
            notice_enacted = None;
            if h2.eq_ignore_ascii_case("Deprecation Notice") {
                let date = heading_date(h).ok_or_else(|| {
                    ParseError::new(
                        Loc::new(file, i + 1, 5),
                        format!("deprecation heading `{}` is not a date", h.trim()),
                    )
                })?;
                notice_day = Some((date, i + 1));
                // "Enacted on" / "Partially enacted on" anywhere in the subsection.
                notice_enacted = lines[i + 1..]
                    .iter()
                    .take_while(|l| !l.starts_with("#"))
                    .find_map(|l| {
                        let lower = l.to_ascii_lowercase();
                        let at = lower.find("enacted on ")?;
                        if lower[..at].ends_with("not yet ") {
                            return None;
                        }
                        find_date(&l[at..])
                    });
            }
            i += 1;
            continue;
        }

        if let Some(t) = table_at(&lines, i) {
            if let Some((day, _)) = notice_day {
                notice_table(&mut md, &t, &lines, day, notice_enacted);
            } else if h2 == "Scenarios" && header_is(&t, &["Scenario", "ISL/OSL", "Status"]) {
                scenarios_table(&mut md, &t);
            } else if header_is(&t, &["Model", "Primary"]) {
                policy_table(&mut md, &t);
            } else if header_is(&t, &["Model architecture class", "Prefix"]) {
                matrix_table(file, &mut md, &t)?;
            }
            i = t.end;
            continue;
        }

        if let Some((day, _)) = notice_day {
            prose_deprecation(&mut md, l, i + 1, day, notice_enacted);
        }
        if l.contains("Brand-new hardware SKUs, such as ")
            && let Some(list) = l
                .split_once("such as ")
                .map(|(_, r)| r.split(", may").next().unwrap_or(r))
        {
            md.new_hardware_exceptions = list
                .replace(", and ", ", ")
                .split(", ")
                .map(|s| s.trim().trim_start_matches("and ").to_owned())
                .filter(|s| !s.is_empty())
                .collect();
        }
        i += 1;
    }

    // A retired model in the matrix is a whole-model deprecation.
    let retired: Vec<Deprecation> = md
        .matrix
        .iter()
        .filter_map(|r| match r.active {
            Active::Retired { date, .. } => Some((r, date)),
            Active::Scenarios(_) => None,
        })
        .flat_map(|(r, date)| {
            r.prefixes.iter().map(move |p| Deprecation {
                line: r.line,
                prefix: Some(p.clone()),
                model: Some(r.class.clone()),
                target: Target::Model,
                last_day: date.and_then(|d| d.checked_sub_days(Days::new(1))),
                effective: date,
                status: date.map_or(Enactment::Announced, Enactment::Enacted),
                origin: Origin::Matrix,
                remains: None,
            })
        })
        .collect();
    md.deprecations.extend(retired);
    Ok(md)
}

fn notice_table(
    md: &mut ModelsMd,
    t: &Table,
    lines: &[&str],
    day: NaiveDate,
    enacted: Option<NaiveDate>,
) {
    // The paragraphs right after the table say whether it is enacted.
    let not_yet = lines[t.end..]
        .iter()
        .take_while(|l| !l.starts_with('#') && !l.trim_start().starts_with('|'))
        .any(|l| l.to_ascii_lowercase().contains("not yet enacted"));
    let status = if not_yet {
        Enactment::NotYetEnacted
    } else {
        enacted.map_or(Enactment::Announced, Enactment::Enacted)
    };
    let effective = day.checked_add_days(Days::new(1));
    for (line, row) in &t.rows {
        let [model, deprecated, remains, ..] = row.as_slice() else {
            continue;
        };
        let (name, prefix) = model_cell(model);
        let day_zero = deprecated.to_ascii_lowercase().contains("from day 0");
        md.deprecations.push(Deprecation {
            line: *line,
            prefix,
            model: Some(name),
            target: classify_target(deprecated),
            last_day: Some(day),
            effective: if day_zero { None } else { effective },
            status,
            origin: Origin::Notice,
            remains: Some(remains.clone()),
        });
    }
}

/// "… is the last day for the **Single-turn 8k1k** scenario on
/// **Kimi-K2.5/2.6/2.7-Code** (`kimik2.5`)."
fn prose_deprecation(
    md: &mut ModelsMd,
    l: &str,
    line: usize,
    day: NaiveDate,
    enacted: Option<NaiveDate>,
) {
    const LEAD: &str = "last day for the **";
    let Some(at) = l.find(LEAD) else {
        return;
    };
    let rest = &l[at + LEAD.len()..];
    let Some((scenario, rest)) = rest.split_once("**") else {
        return;
    };
    let Some(rest) = rest.trim_start().strip_prefix("scenario on **") else {
        return;
    };
    let Some((model, rest)) = rest.split_once("**") else {
        return;
    };
    let prefix = backticked(rest).into_iter().next();
    let target = Scenario::parse(scenario)
        .map_or_else(|| Target::Other(scenario.to_owned()), Target::Scenario);
    md.deprecations.push(Deprecation {
        line,
        prefix,
        model: Some(model.to_owned()),
        target,
        last_day: Some(day),
        effective: day.checked_add_days(Days::new(1)),
        status: enacted.map_or(Enactment::Announced, Enactment::Enacted),
        origin: Origin::Notice,
        remains: None,
    });
}

fn scenarios_table(md: &mut ModelsMd, t: &Table) {
    for (line, row) in &t.rows {
        let [name, io, status, ..] = row.as_slice() else {
            continue;
        };
        let isl_osl = io.split_once('/').and_then(|(a, b)| {
            Some((a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?))
        });
        let scenario = isl_osl
            .map(|(i, o)| Scenario::Fixed { isl: i, osl: o })
            .or_else(|| Scenario::parse(name));
        let lower = status.to_ascii_lowercase();
        let st = if lower.starts_with("active") {
            ScenarioStatus::Active
        } else if lower.contains("deprecated for all models") {
            match find_date(status) {
                Some(d) => ScenarioStatus::DeprecatedSince(d),
                None => ScenarioStatus::Unknown(status.clone()),
            }
        } else {
            ScenarioStatus::Unknown(status.clone())
        };
        let pr = find_pr(status);
        if let (ScenarioStatus::DeprecatedSince(d), Some(s)) = (&st, scenario) {
            md.deprecations.push(Deprecation {
                line: *line,
                prefix: None,
                model: None,
                target: Target::Scenario(s),
                last_day: d.checked_sub_days(Days::new(1)),
                effective: Some(*d),
                status: Enactment::Enacted(*d),
                origin: Origin::Scenarios,
                remains: None,
            });
        }
        md.scenarios.push(ScenarioRow {
            line: *line,
            name: name.clone(),
            scenario,
            isl_osl,
            status: st,
            pr,
        });
    }
}

fn policy_table(md: &mut ModelsMd, t: &Table) {
    for (line, row) in &t.rows {
        let [model, primary, agreed, proposed, additional, ..] = row.as_slice() else {
            continue;
        };
        let (name, prefix) = model_cell(model);
        let Some(prefix) = prefix else {
            continue;
        };
        let mut engines = Vec::new();
        if primary.contains("vLLM") {
            engines.push(Engine::Vllm);
        }
        if primary.contains("SGLang") {
            engines.push(Engine::Sglang);
        }
        md.engine_policy.push(EnginePolicy {
            line: *line,
            model: name,
            prefix,
            primary: engines,
            agreed_drafts: backticked(agreed),
            agreed_text: agreed.clone(),
            proposed: proposed.clone(),
            additional: additional.clone(),
        });
    }
}

fn matrix_table(file: &str, md: &mut ModelsMd, t: &Table) -> Result<(), ParseError> {
    for (line, row) in &t.rows {
        let [class, prefix, added, active, rest @ ..] = row.as_slice() else {
            return Err(ParseError::new(
                Loc::new(file, *line, 1),
                format!("support-matrix row has {} cells, expected 5", row.len()),
            ));
        };
        let prefixes = backticked(prefix);
        if prefixes.is_empty() {
            return Err(ParseError::new(
                Loc::new(file, *line, 1),
                "support-matrix row names no backticked prefix",
            ));
        }
        let added = if added.trim().eq_ignore_ascii_case("TBD") {
            Added::Tbd
        } else {
            match find_date(added) {
                Some(date) => Added::Date {
                    date,
                    pr: find_pr(added),
                },
                None => Added::Unparsed(added.clone()),
            }
        };
        let active = if active.trim_start().starts_with("None") {
            Active::Retired {
                date: find_date(active),
                pr: find_pr(active),
            }
        } else {
            Active::Scenarios(split_top_commas(active))
        };
        md.matrix.push(ModelRow {
            line: *line,
            class: class.clone(),
            prefixes,
            added,
            active,
            deprecated: rest
                .first()
                .map(|d| split_top_commas(d))
                .unwrap_or_default(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn scenario_names() {
        assert_eq!(
            Scenario::parse("Single-turn 8k1k"),
            Some(Scenario::Fixed {
                isl: 8192,
                osl: 1024
            })
        );
        assert_eq!(
            Scenario::parse("Agentic coding (DSpark only)"),
            Some(Scenario::AgenticCoding)
        );
        assert_eq!(
            Scenario::from_isl_osl(1024, 8192).name(),
            "Single-turn 1k8k"
        );
        assert_eq!(Scenario::parse("Long context"), None);
    }

    #[test]
    fn headings_and_cells() {
        assert_eq!(
            heading_date("Monday, August 3, 2026"),
            Some(d("2026-08-03"))
        );
        assert_eq!(cells("| a `x|y` | b \\| c |"), vec!["a `x|y`", "b | c"]);
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

    #[test]
    fn notice_takes_effect_the_next_day() {
        let md = "## Deprecation Notice\n\n### Monday, August 3, 2026\n\n| Model | Deprecated | Remains |\n|---|---|---|\n| M (`m`) | Single-turn 8k1k | Agentic coding |\n";
        let m = parse("MODELS.md", md.as_bytes()).unwrap();
        let dep = &m.deprecations[0];
        assert_eq!((dep.line, dep.effective), (7, Some(d("2026-08-04"))));
        let s = Scenario::Fixed {
            isl: 8192,
            osl: 1024,
        };
        assert!(
            m.deprecation_for("m", s, "fp8", false, d("2026-08-03"))
                .is_none()
        );
        assert!(
            m.deprecation_for("m", s, "fp8", false, d("2026-08-04"))
                .is_some()
        );
    }

    #[test]
    fn bad_heading_is_located() {
        let e = parse("MODELS.md", b"## Deprecation Notice\n### Soon\n").unwrap_err();
        assert_eq!((e.loc.line, e.loc.column), (2, 5));
    }
}
