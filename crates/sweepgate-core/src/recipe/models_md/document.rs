//! Reading `MODELS.md`: finding its sections and reading the deprecation
//! notices, scenarios, engine policy and model matrix into the model.

use chrono::{Days, NaiveDate};

use super::markdown::{
    Table, backticked, classify_target, find_date, find_pr, header_is, heading_date, model_cell,
    split_top_commas,
};
use super::model::{
    Active, Added, Deprecation, Enactment, Engine, EnginePolicy, ModelRow, ModelsMd, Origin,
    Scenario, ScenarioRow, ScenarioStatus, Target,
};
use crate::recipe::{Loc, ParseError};

pub fn parse(file: &str, bytes: &[u8]) -> Result<ModelsMd, ParseError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let before = &bytes[..e.valid_up_to()];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let col = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
        ParseError::new(Loc::new(file, line, col), "MODELS.md is not valid UTF-8")
    })?;
    let lines: Vec<&str> = text.lines().collect();
    // Headings and tables as GitHub renders them, by 1-based line.
    let outline = crate::markdown::outline(text);
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
        let heading = outline.headings.get(&(i + 1));
        if let Some(h) = heading.filter(|h| h.level == 2) {
            h2 = h.text.clone();
            notice_day = None;
            i += 1;
            continue;
        }
        if let Some(h) = heading.filter(|h| h.level == 3).map(|h| h.text.as_str()) {
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
                    .enumerate()
                    .take_while(|(k, _)| !outline.headings.contains_key(&(i + 2 + k)))
                    .find_map(|(_, l)| {
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

        if let Some(t) = outline.tables.get(&(i + 1)) {
            if let Some((day, _)) = notice_day {
                notice_table(&mut md, t, &lines, day, notice_enacted);
            } else if h2 == "Scenarios" && header_is(t, &["Scenario", "ISL/OSL", "Status"]) {
                scenarios_table(&mut md, t);
            } else if header_is(t, &["Model", "Primary"]) {
                policy_table(&mut md, t);
            } else if header_is(t, &["Model architecture class", "Prefix"]) {
                matrix_table(file, &mut md, t)?;
            }
            i = t.last;
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
    let not_yet = lines[t.last.min(lines.len())..]
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
    use crate::recipe::models_md::d;

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
