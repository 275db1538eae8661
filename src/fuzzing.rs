//! The bodies of the `webhook` and `pareto_svg` fuzz targets
//! (`fuzz/fuzz_targets/`) and the table of every target; the parser targets' bodies are
//! `sweepgate_core::fuzzing`. Compiled only with the `fuzzing` feature, for
//! the fuzz package and the corpus replay test.
use crate::dashboard::svg;
use crate::events::{self, Disposition, PayloadError};
use sweepgate_core::checks::c14_pareto::{Point, Series};
use sweepgate_core::fuzzing::{self as core, Body, assert_line};

/// Every target, by the name of its directory under `fuzz/corpus/`.
pub const TARGETS: &[(&str, Body)] = &[
    ("webhook", webhook),
    ("commands", core::commands),
    ("signoff", core::signoff),
    ("recipe_yaml", core::recipe_yaml),
    ("recipe_text", core::recipe_text),
    ("codeowners", core::codeowners),
    ("script", core::script),
    ("pareto_svg", pareto_svg),
];

/// Event names the first byte of a `webhook` input selects from (modulo the
/// length): every event of the event table (`events::table`), and one
/// sweepgate does not read.
pub(crate) fn webhook_events() -> Vec<&'static str> {
    let mut all = events::table::events();
    all.push("star");
    all
}

/// `events::parse` under the event name the first byte selects. A JSON
/// error names a line of the body; a known event always yields its typed
/// event, whose pull request is the envelope's.
pub(crate) fn webhook(data: &[u8]) {
    let Some((&sel, body)) = data.split_first() else {
        return;
    };
    let names = webhook_events();
    let event = names[usize::from(sel) % names.len()];
    match events::parse(event, body) {
        Ok((envelope, ev)) => {
            let known = event != "star";
            assert_eq!(ev.is_some(), known, "{event}");
            if let Some(ev) = &ev {
                assert_eq!(ev.pr_number(), envelope.pr_number);
                let _ = ev.head_sha();
            }
            // A delivery is queued only for a kind some handler takes.
            if let Disposition::Handle { kind } =
                events::disposition(event, envelope.action.as_deref())
            {
                assert!(kind.starts_with(event), "{kind}");
                assert!(!events::table::handlers(&kind).is_empty(), "{kind}");
            }
            let _ = envelope.serial_key();
        }
        Err(PayloadError::Json { line, .. }) => assert_line("JSON error", line, body),
        Err(PayloadError::NotAnObject { .. } | PayloadError::Shape { .. }) => {}
    }
}

/// The dashboard's Pareto plot over curves decoded from the input: the
/// first byte is a label (escaped), then records of 17 bytes, an `x` and a
/// `y` (little-endian `f64`, any bit pattern: NaN, infinities, 1.5e308)
/// and a flag byte (bit 0 starts a new curve, bit 1 puts the point on the
/// frontier). The plot is one well-formed SVG with no non-finite number
/// in it, draws only plottable points and at most the capped number, and
/// no label escapes its text.
pub(crate) fn pareto_svg(data: &[u8]) {
    let Some((&label, rest)) = data.split_first() else {
        return;
    };
    let label = match label % 4 {
        0 => "dsv4/1k1k/h200_vllm/fp8/run7",
        1 => "<script>alert(1)</script>",
        2 => "a\"b'c&d",
        _ => "",
    };
    let mut series: Vec<Series> = Vec::new();
    for r in rest.chunks_exact(17) {
        let f = |b: &[u8]| f64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
        let (x, y, flags) = (f(&r[0..8]), f(&r[8..16]), r[16]);
        if flags & 1 == 1 || series.is_empty() {
            series.push(Series {
                label: label.to_owned(),
                percentile: "P90 E2EL".into(),
                points: Vec::new(),
                frontier: Vec::new(),
            });
        }
        if let Some(s) = series.last_mut() {
            if flags & 2 == 2 {
                s.frontier.push(s.points.len());
            }
            s.points.push(Point {
                x,
                y,
                label: label.to_owned(),
            });
        }
    }
    let out = svg::pareto(&series, label);
    assert!(out.starts_with("<svg") && out.ends_with("</svg>"));
    assert!(!out.contains("<script"), "a label escaped its text");
    assert!(!out.contains("NaN") && !out.contains("inf"), "{out}");
    let expected: usize = series
        .iter()
        .take(svg::MAX_SERIES)
        .map(|s| {
            s.points
                .iter()
                .filter(|p| {
                    [p.x, p.y]
                        .iter()
                        .all(|v| v.is_finite() && (0.0..=svg::MAX_VALUE).contains(v))
                })
                .count()
                .min(svg::MAX_POINTS)
        })
        .sum();
    assert_eq!(out.matches(r#"class="point "#).count(), expected);
}
