//! `utils/evals/thresholds.yaml`: the minimum eval score per task, with
//! per-model-prefix overrides. Mirrors `utils/evals/validate_scores.py`:
//! an exact match on the model prefix, then `default[task]`, then the CLI
//! fallback (0.85 in the reference).

use super::yaml::{self, Node};
use super::{Loc, ParseError};

/// The CLI fallback of `validate_scores.py` when neither table has the task.
pub(crate) const CLI_FALLBACK: f64 = 0.85;

/// One threshold value and where it is written.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub task: String,
    pub value: f64,
    pub line: usize,
}

/// The overrides of one model prefix.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelBars {
    pub prefix: String,
    pub line: usize,
    pub bars: Vec<Bar>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Thresholds {
    pub file: String,
    pub defaults: Vec<Bar>,
    pub models: Vec<ModelBars>,
}

/// Which table a threshold came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Model,
    Default,
    CliFallback,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Threshold {
    pub value: f64,
    pub source: Source,
    /// Line of the value in the file; `None` for the CLI fallback.
    pub line: Option<usize>,
}

impl Thresholds {
    /// The bar for `task` on a model prefix (exact, case-sensitive match,
    /// as the script does).
    pub fn lookup(&self, prefix: Option<&str>, task: &str) -> Threshold {
        let model = prefix.and_then(|p| self.models.iter().find(|m| m.prefix == p));
        if let Some(bar) = model.and_then(|m| m.bars.iter().find(|b| b.task == task)) {
            return Threshold {
                value: bar.value,
                source: Source::Model,
                line: Some(bar.line),
            };
        }
        if let Some(bar) = self.defaults.iter().find(|b| b.task == task) {
            return Threshold {
                value: bar.value,
                source: Source::Default,
                line: Some(bar.line),
            };
        }
        Threshold {
            value: CLI_FALLBACK,
            source: Source::CliFallback,
            line: None,
        }
    }
}

/// Whether an lm-eval metric name counts against the bar: every
/// `exact_match,<filter>` that is not a stderr.
pub(crate) fn metric_counts(name: &str) -> bool {
    name.starts_with("exact_match,") && !name.contains("stderr")
}

/// Outcome of checking one task's metrics against its bar.
#[derive(Debug, Clone, PartialEq)]
pub enum ScoreCheck {
    /// Every counted metric meets the bar.
    Pass { bar: Threshold, counted: usize },
    /// These counted metrics are below the bar.
    Below {
        bar: Threshold,
        failing: Vec<(String, f64)>,
    },
    /// No metric counted, which the script treats as a failure too.
    NoMetric { bar: Threshold },
}

impl Thresholds {
    /// Checks `(metric name, score)` pairs of one task.
    pub fn check<'a>(
        &self,
        prefix: Option<&str>,
        task: &str,
        metrics: impl IntoIterator<Item = (&'a str, f64)>,
    ) -> ScoreCheck {
        let bar = self.lookup(prefix, task);
        let mut counted = 0;
        let mut failing = Vec::new();
        for (name, score) in metrics {
            if !metric_counts(name) {
                continue;
            }
            counted += 1;
            // NaN fails: it never meets a bar.
            if score.partial_cmp(&bar.value).is_none_or(|o| o.is_lt()) {
                failing.push((name.to_owned(), score));
            }
        }
        if counted == 0 {
            ScoreCheck::NoMetric { bar }
        } else if failing.is_empty() {
            ScoreCheck::Pass { bar, counted }
        } else {
            ScoreCheck::Below { bar, failing }
        }
    }
}

pub fn parse(file: &str, bytes: &[u8]) -> Result<Thresholds, ParseError> {
    let root = yaml::parse_plain(file, bytes)?;
    let err = |n: &Node, m: String| ParseError::new(n.loc(file), m);
    let Some(top) = root.as_map() else {
        return Err(err(
            &root,
            format!("expected a mapping, found {}", root.kind()),
        ));
    };
    let mut defaults = Vec::new();
    let mut models = Vec::new();
    for (k, v) in top {
        match k.as_str() {
            Some("default") => defaults = bars(file, v)?,
            Some("models") => {
                let Some(entries) = v.as_map() else {
                    return Err(err(
                        v,
                        format!("`models` must be a mapping, found {}", v.kind()),
                    ));
                };
                for (pk, pv) in entries {
                    let prefix = pk
                        .key_text()
                        .ok_or_else(|| err(pk, "model prefix must be a scalar".into()))?;
                    models.push(ModelBars {
                        prefix,
                        line: pk.line(),
                        bars: bars(file, pv)?,
                    });
                }
            }
            _ => {
                return Err(err(
                    k,
                    format!(
                        "unknown key `{}` (expected `default` or `models`)",
                        k.key_text().unwrap_or_default()
                    ),
                ));
            }
        }
    }
    Ok(Thresholds {
        file: file.to_owned(),
        defaults,
        models,
    })
}

fn bars(file: &str, node: &Node) -> Result<Vec<Bar>, ParseError> {
    let Some(entries) = node.as_map() else {
        return Err(ParseError::new(
            node.loc(file),
            format!("expected task: score pairs, found {}", node.kind()),
        ));
    };
    entries
        .iter()
        .map(|(k, v)| {
            let task = k
                .key_text()
                .ok_or_else(|| ParseError::new(k.loc(file), "task name must be a scalar"))?;
            let value = v.as_f64().filter(|x| x.is_finite()).ok_or_else(|| {
                ParseError::new(
                    Loc::new(file, v.line(), v.column()),
                    format!(
                        "threshold for `{task}` must be a number, found {}",
                        v.kind()
                    ),
                )
            })?;
            Ok(Bar {
                task,
                value,
                line: k.line(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "default:\n  gsm8k: 0.90\nmodels:\n  dsr1:\n    gsm8k: 0.91\n";

    #[test]
    fn lookup_order() {
        let t = parse("t.yaml", SAMPLE.as_bytes()).unwrap();
        let m = t.lookup(Some("dsr1"), "gsm8k");
        assert_eq!((m.value, m.source, m.line), (0.91, Source::Model, Some(5)));
        let d = t.lookup(Some("kimik3"), "gsm8k");
        assert_eq!((d.value, d.source), (0.90, Source::Default));
        // Exact match only: a longer prefix does not inherit.
        assert_eq!(t.lookup(Some("dsr1x"), "gsm8k").source, Source::Default);
        assert_eq!(t.lookup(None, "mmlu").source, Source::CliFallback);
    }

    #[test]
    fn scores_against_bar() {
        let t = parse("t.yaml", SAMPLE.as_bytes()).unwrap();
        let ok = t.check(
            Some("dsr1"),
            "gsm8k",
            [
                ("exact_match,strict-match", 0.95),
                ("exact_match_stderr,strict-match", 0.001),
                ("exact_match,flexible-extract", 0.93),
            ],
        );
        assert_eq!(
            ok,
            ScoreCheck::Pass {
                bar: t.lookup(Some("dsr1"), "gsm8k"),
                counted: 2
            }
        );
        let low = t.check(
            Some("dsr1"),
            "gsm8k",
            [("exact_match,flexible-extract", 0.905)],
        );
        assert!(matches!(low, ScoreCheck::Below { ref failing, .. } if failing.len() == 1));
        let none = t.check(Some("dsr1"), "gsm8k", [("acc,none", 0.99)]);
        assert!(matches!(none, ScoreCheck::NoMetric { .. }));
    }

    #[test]
    fn errors_have_positions() {
        let e = parse("t.yaml", b"default:\n  gsm8k: high\n").unwrap_err();
        assert_eq!((e.loc.line, e.loc.column), (2, 10));
        let e = parse("t.yaml", b"default: {}\nextra: 1\n").unwrap_err();
        assert_eq!(e.loc.line, 2);
        // Issue 17 item 6: one duplicate-key policy, PyYAML's (the last
        // value wins); lint L31 reports the repeat at its line.
        let t = parse("t.yaml", b"default:\n  a: 1\n  a: 2\n").unwrap();
        assert_eq!(t.defaults[0].value, 2.0);
    }
}
