//! Every SVG sweepgate writes, with one escape ([`esc`]): the dashboard's
//! Pareto plot, and the log-log line plots of `cargo xtask bench`.
//!
//! The Pareto plot: one panel per curve and latency percentile, every
//! measured point, the frontier highlighted and joined, axes labelled, the
//! run and SHA in the caption. Plain SVG, no scripts, no external assets.
//!
//! The values come from a run's artifacts, so anyone who can run the
//! workflow writes them: a value that is not a finite number in
//! `0..=MAX_VALUE` is left out with a note, and curves, points and ticks
//! are capped, so no artifact can make a page slow or large.
use std::collections::HashSet;
use std::fmt::Write;
use sweepgate_core::checks::c14_pareto::Series;

/// Largest latency (s) or throughput (tok/s/GPU) plotted: far above any
/// real measurement, far below where `max * 1.05` overflows.
pub(crate) const MAX_VALUE: f64 = 1e9;
/// Curves per plot and points per curve that are drawn.
pub(crate) const MAX_SERIES: usize = 32;
pub(crate) const MAX_POINTS: usize = 500;
/// Ticks per axis (a round step gives about five).
const MAX_TICKS: usize = 12;

const W: f64 = 720.0;
const PANEL_H: f64 = 340.0;
const LEFT: f64 = 90.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 42.0;
const BOTTOM: f64 = 56.0;
const CAPTION_H: f64 = 34.0;
const FRONTIER: &str = "#c62828";
const DOMINATED: &str = "#9e9e9e";

/// XML text and attribute escaping.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A round step giving about five ticks over `0..max`.
fn step(max: f64) -> f64 {
    if !(max.is_finite() && max > 0.0) {
        return 1.0;
    }
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let nice = if norm <= 1.0 {
        1.0
    } else if norm <= 2.0 {
        2.0
    } else if norm <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// `0, step, 2·step, …` up to `top` (at most `MAX_TICKS`).
fn ticks(top: f64, step: f64) -> impl Iterator<Item = f64> {
    (0..=MAX_TICKS)
        .map(move |i| i as f64 * step)
        .take_while(move |t| *t <= top + step / 2.0)
}

fn tick_label(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 10.0 {
        format!("{:.0}", v)
    } else if v.abs() >= 1.0 {
        format!("{:.1}", v)
    } else {
        format!("{:.2}", v)
    }
}

fn plottable(v: f64) -> bool {
    v.is_finite() && (0.0..=MAX_VALUE).contains(&v)
}

/// A curve as drawn: its plottable points (at most `MAX_POINTS`), the
/// frontier among them, and what was left out.
pub(crate) struct Panel<'a> {
    pub series: &'a Series,
    /// Indices into `series.points` that are drawn.
    pub points: Vec<usize>,
    pub frontier: HashSet<usize>,
    pub note: String,
}

/// Which curves and points can be drawn, with a note for each left out.
pub(crate) fn panels(series: &[Series]) -> (Vec<Panel<'_>>, String) {
    let panels = series
        .iter()
        .take(MAX_SERIES)
        .map(|s| {
            let valid: Vec<usize> = (0..s.points.len())
                .filter(|&i| plottable(s.points[i].x) && plottable(s.points[i].y))
                .collect();
            let absurd = s.points.len() - valid.len();
            let points: Vec<usize> = valid.iter().copied().take(MAX_POINTS).collect();
            let mut notes = Vec::new();
            if absurd > 0 {
                notes.push(format!(
                    "{absurd} point{} not plotted: not a number from 0 to {MAX_VALUE:e}",
                    if absurd == 1 { "" } else { "s" }
                ));
            }
            if valid.len() > points.len() {
                notes.push(format!(
                    "only the first {MAX_POINTS} of {} points are plotted",
                    valid.len()
                ));
            }
            let drawn: HashSet<usize> = points.iter().copied().collect();
            Panel {
                series: s,
                frontier: s
                    .frontier
                    .iter()
                    .copied()
                    .filter(|i| drawn.contains(i))
                    .collect(),
                points,
                note: notes.join("; "),
            }
        })
        .collect();
    let note = if series.len() > MAX_SERIES {
        format!(
            "only the first {MAX_SERIES} of {} curves are plotted",
            series.len()
        )
    } else {
        String::new()
    };
    (panels, note)
}

/// The whole plot; `caption` names the run and the SHA.
pub(crate) fn pareto(series: &[Series], caption: &str) -> String {
    let (panels, note) = panels(series);
    let caption = if note.is_empty() {
        caption.to_owned()
    } else {
        format!("{caption} ({note})")
    };
    let caption = caption.as_str();
    let height = panels.len().max(1) as f64 * PANEL_H + CAPTION_H;
    let mut out = String::new();
    let _ = write!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" class="pareto" width="{W}" height="{height}" viewBox="0 0 {W} {height}" role="img" aria-label="Pareto plot: {}">"##,
        esc(caption)
    );
    out.push_str(r##"<rect width="100%" height="100%" fill="#ffffff"/>"##);
    if series.is_empty() {
        let _ = write!(
            out,
            r##"<text x="{}" y="{}" text-anchor="middle" font-family="sans-serif" font-size="14">No benchmark points were assessed.</text>"##,
            W / 2.0,
            PANEL_H / 2.0
        );
    }
    for (i, p) in panels.iter().enumerate() {
        panel(&mut out, p, i as f64 * PANEL_H);
    }
    let _ = write!(
        out,
        r##"<text class="caption" x="{}" y="{}" text-anchor="middle" font-family="sans-serif" font-size="13" fill="#333">{}</text>"##,
        W / 2.0,
        height - 12.0,
        esc(caption)
    );
    out.push_str("</svg>");
    out
}

fn panel(out: &mut String, p: &Panel<'_>, y0: f64) {
    let s = p.series;
    let plot_w = W - LEFT - RIGHT;
    let plot_h = PANEL_H - TOP - BOTTOM;
    let drawn = || p.points.iter().map(|&i| &s.points[i]);
    let max_x = drawn().map(|p| p.x).fold(0.0, f64::max) * 1.05;
    let max_y = drawn().map(|p| p.y).fold(0.0, f64::max) * 1.05;
    let (sx, sy) = (step(max_x), step(max_y));
    let (top_x, top_y) = (
        (max_x / sx).ceil().max(1.0) * sx,
        (max_y / sy).ceil().max(1.0) * sy,
    );
    let px = |x: f64| LEFT + x / top_x * plot_w;
    let py = |y: f64| y0 + TOP + plot_h - y / top_y * plot_h;
    let _ = write!(
        out,
        r##"<g class="series" data-label="{}" data-percentile="{}" data-frontier="{}" data-points="{}">"##,
        esc(&s.label),
        esc(&s.percentile),
        p.frontier.len(),
        p.points.len()
    );
    let _ = write!(
        out,
        r##"<text class="title" x="{}" y="{}" text-anchor="middle" font-family="sans-serif" font-size="14" font-weight="bold">{} — {}: {} of {} points on the frontier</text>"##,
        W / 2.0,
        y0 + 24.0,
        esc(&s.label),
        esc(&s.percentile),
        s.frontier.len(),
        s.points.len()
    );
    if !p.note.is_empty() {
        let _ = write!(
            out,
            r##"<text class="note" x="{}" y="{}" text-anchor="middle" font-family="sans-serif" font-size="11" fill="#b71c1c">{}</text>"##,
            W / 2.0,
            y0 + 38.0,
            esc(&p.note)
        );
    }
    // Grid and ticks.
    for t in ticks(top_x, sx) {
        let x = px(t);
        let _ = write!(
            out,
            r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#eee"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" font-family="sans-serif" font-size="11">{}</text>"##,
            py(0.0),
            py(top_y),
            py(0.0) + 16.0,
            tick_label(t)
        );
    }
    for t in ticks(top_y, sy) {
        let y = py(t);
        let _ = write!(
            out,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#eee"/><text x="{:.1}" y="{:.1}" text-anchor="end" font-family="sans-serif" font-size="11">{}</text>"##,
            LEFT + plot_w,
            LEFT - 6.0,
            y + 4.0,
            tick_label(t)
        );
    }
    // Axes and their labels.
    let _ = write!(
        out,
        r##"<line class="axis x" x1="{LEFT}" y1="{b:.1}" x2="{r:.1}" y2="{b:.1}" stroke="#333"/><line class="axis y" x1="{LEFT}" y1="{b:.1}" x2="{LEFT}" y2="{t:.1}" stroke="#333"/>"##,
        b = py(0.0),
        r = LEFT + plot_w,
        t = py(top_y)
    );
    let _ = write!(
        out,
        r##"<text class="xlabel" x="{:.1}" y="{:.1}" text-anchor="middle" font-family="sans-serif" font-size="12">{} end-to-end latency (s)</text>"##,
        LEFT + plot_w / 2.0,
        y0 + PANEL_H - 14.0,
        esc(&s.percentile.replace(" E2EL", ""))
    );
    let (lx, ly) = (18.0, y0 + TOP + plot_h / 2.0);
    let _ = write!(
        out,
        r##"<text class="ylabel" x="{lx}" y="{ly:.1}" transform="rotate(-90 {lx} {ly:.1})" text-anchor="middle" font-family="sans-serif" font-size="12">total token throughput per GPU (tok/s)</text>"##
    );
    // The frontier line, then the points (frontier on top).
    let line: Vec<String> = s
        .frontier
        .iter()
        .filter(|i| p.frontier.contains(i))
        .filter_map(|&i| s.points.get(i))
        .map(|p| format!("{:.1},{:.1}", px(p.x), py(p.y)))
        .collect();
    if line.len() > 1 {
        let _ = write!(
            out,
            r##"<polyline class="frontier-line" points="{}" fill="none" stroke="{FRONTIER}" stroke-width="2"/>"##,
            line.join(" ")
        );
    }
    let mut order: Vec<usize> = p.points.clone();
    order.sort_by_key(|i| p.frontier.contains(i));
    let frontier = &p.frontier;
    for i in order {
        let p = &s.points[i];
        let on = frontier.contains(&i);
        let _ = write!(
            out,
            r##"<circle class="{}" cx="{:.1}" cy="{:.1}" r="{}" fill="{}"><title>{}: latency {:.3} s, {:.1} tok/s/GPU{}</title></circle>"##,
            if on {
                "point frontier"
            } else {
                "point dominated"
            },
            px(p.x),
            py(p.y),
            if on { 5 } else { 4 },
            if on { FRONTIER } else { DOMINATED },
            esc(&p.label),
            p.x,
            p.y,
            if on { " (frontier)" } else { "" }
        );
    }
    // Legend, top left: low latency with high throughput is where no
    // measured point can be.
    let lx = LEFT + 14.0;
    let ly = y0 + TOP + 8.0;
    let _ = write!(
        out,
        r##"<circle cx="{lx}" cy="{ly}" r="5" fill="{FRONTIER}"/><text x="{}" y="{}" font-family="sans-serif" font-size="11">Pareto frontier</text><circle cx="{lx}" cy="{}" r="4" fill="{DOMINATED}"/><text x="{}" y="{}" font-family="sans-serif" font-size="11">dominated</text>"##,
        lx + 10.0,
        ly + 4.0,
        ly + 16.0,
        lx + 10.0,
        ly + 20.0
    );
    out.push_str("</g>");
}

// ---- Line plots on log-log axes (`cargo xtask bench`'s growth plots) ----

/// One line of a plot: `(x, y)` points, x and y positive.
pub struct LineSeries<'a> {
    pub name: &'a str,
    pub color: &'a str,
    pub points: Vec<(f64, f64)>,
}

fn log_tick(v: f64) -> String {
    // Whole numbers (the measured sizes) without decimals.
    if v >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Renders the series on log-log axes, with a dashed line of linear growth
/// from the first point of the first series for comparison.
pub fn log_log_plot(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[LineSeries<'_>],
) -> String {
    let (w, h) = (640.0_f64, 400.0_f64);
    let (left, right, top, bottom) = (70.0, 160.0, 40.0, 50.0);
    let all: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.points.iter().copied())
        .filter(|(x, y)| *x > 0.0 && *y > 0.0)
        .collect();
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for (x, y) in &all {
        x0 = x0.min(*x);
        x1 = x1.max(*x);
        y0 = y0.min(*y);
        y1 = y1.max(*y);
    }
    if all.is_empty() {
        (x0, x1, y0, y1) = (1.0, 10.0, 1.0, 10.0);
    }
    let (lx0, lx1) = (x0.log10(), x1.log10().max(x0.log10() + 1e-6));
    let (ly0, ly1) = ((y0 / 2.0).log10(), (y1 * 2.0).log10());
    let px = |x: f64| left + (x.log10() - lx0) / (lx1 - lx0) * (w - left - right);
    let py = |y: f64| h - bottom - (y.log10() - ly0) / (ly1 - ly0) * (h - top - bottom);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        s,
        r#"<rect x="0" y="0" width="{w}" height="{h}" fill="white"/>"#
    );
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="14">{}</text>"#,
        (w - right + left) / 2.0,
        esc(title)
    );
    // Axes.
    let _ = writeln!(
        s,
        r#"<line x1="{left}" y1="{}" x2="{}" y2="{}" stroke="black"/>"#,
        h - bottom,
        w - right,
        h - bottom
    );
    let _ = writeln!(
        s,
        r#"<line x1="{left}" y1="{top}" x2="{left}" y2="{}" stroke="black"/>"#,
        h - bottom
    );
    // X ticks at the measured sizes.
    let mut xs: Vec<f64> = all.iter().map(|p| p.0).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    for x in xs {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
            px(x),
            h - bottom + 16.0,
            log_tick(x)
        );
    }
    // Y ticks at decades and halves inside the range.
    let mut d = 10f64.powf(ly0.floor());
    while d <= 10f64.powf(ly1) {
        for m in [1.0, 3.0] {
            let y = d * m;
            if y.log10() >= ly0 && y.log10() <= ly1 {
                let _ = writeln!(
                    s,
                    r##"<line x1="{left}" y1="{0:.1}" x2="{1}" y2="{0:.1}" stroke="#ddd"/><text x="{2}" y="{3:.1}" text-anchor="end">{4}</text>"##,
                    py(y),
                    w - right,
                    left - 6.0,
                    py(y) + 4.0,
                    log_tick(y)
                );
            }
        }
        d *= 10.0;
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        (w - right + left) / 2.0,
        h - 12.0,
        esc(x_label)
    );
    let _ = writeln!(
        s,
        r#"<text x="16" y="{}" text-anchor="middle" transform="rotate(-90 16 {})">{}</text>"#,
        (h - bottom + top) / 2.0,
        (h - bottom + top) / 2.0,
        esc(y_label)
    );
    // Linear growth from the first point, for comparison, cut at the top.
    if let Some(&(fx, fy)) = series.first().and_then(|s| s.points.first())
        && fx > 0.0
        && fy > 0.0
    {
        let y_top = 10f64.powf(ly1);
        let x_end = x1.min(fx * y_top / fy);
        let _ = writeln!(
            s,
            r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#999" stroke-dasharray="4 4"/>"##,
            px(fx),
            py(fy),
            px(x_end),
            py(fy * x_end / fx)
        );
    }
    for (i, ser) in series.iter().enumerate() {
        let pts: Vec<String> = ser
            .points
            .iter()
            .filter(|(x, y)| *x > 0.0 && *y > 0.0)
            .map(|(x, y)| format!("{:.1},{:.1}", px(*x), py(*y)))
            .collect();
        let _ = writeln!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2"/>"#,
            pts.join(" "),
            esc(ser.color)
        );
        for (x, y) in ser.points.iter().filter(|(x, y)| *x > 0.0 && *y > 0.0) {
            let _ = writeln!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{}"><title>{} {}: {} ms</title></circle>"#,
                px(*x),
                py(*y),
                esc(ser.color),
                esc(ser.name),
                log_tick(*x),
                log_tick(*y)
            );
        }
        let ly = top + 20.0 * i as f64;
        let _ = writeln!(
            s,
            r#"<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="{3}" stroke-width="2"/><text x="{4}" y="{5}">{6}</text>"#,
            w - right + 12.0,
            ly,
            w - right + 32.0,
            esc(ser.color),
            w - right + 38.0,
            ly + 4.0,
            esc(ser.name)
        );
    }
    let ly = top + 20.0 * series.len() as f64;
    let _ = writeln!(
        s,
        r##"<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#999" stroke-dasharray="4 4"/><text x="{3}" y="{4}">linear</text>"##,
        w - right + 12.0,
        ly,
        w - right + 32.0,
        w - right + 38.0,
        ly + 4.0
    );
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use sweepgate_core::checks::c14_pareto::{Point, frontier};

    fn series() -> Series {
        let points: Vec<Point> = [(1.0, 100.0), (2.0, 180.0), (2.5, 150.0), (4.0, 260.0)]
            .iter()
            .map(|&(x, y)| Point {
                x,
                y,
                label: format!("tp8 conc{}", x as u32),
            })
            .collect();
        Series {
            label: "dsv4/1k1k/h200_vllm/fp8/run7".into(),
            percentile: "P90 E2EL".into(),
            frontier: frontier(&points),
            points,
        }
    }

    #[test]
    fn frontier_points_are_highlighted_and_dominated_ones_grey() {
        let svg = pareto(&[series()], "run 7 · abc123");
        assert_eq!(svg.matches(r##"class="point frontier""##).count(), 3);
        assert_eq!(svg.matches(r##"class="point dominated""##).count(), 1);
        assert!(svg.contains(r##"class="frontier-line""##));
        assert!(svg.contains("P90 end-to-end latency (s)"));
        assert!(svg.contains("total token throughput per GPU (tok/s)"));
        assert!(svg.contains(">run 7 · abc123</text>"));
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
    }

    #[test]
    fn labels_are_escaped() {
        let mut s = series();
        s.label = "<script>&".into();
        let svg = pareto(&[s], "run \"1\"");
        assert!(!svg.contains("<script>"));
        assert!(svg.contains("&lt;script&gt;&amp;"));
        assert!(svg.contains("run &quot;1&quot;"));
    }

    #[test]
    fn no_series_says_so() {
        let svg = pareto(&[], "run 1");
        assert!(svg.contains("No benchmark points were assessed."));
    }

    #[test]
    fn absurd_values_are_left_out_with_a_note_and_nothing_hangs() {
        let mut s = series();
        for (x, y) in [
            (1.5e308, 100.0),
            (2.0, 1.7e308),
            (f64::NAN, 1.0),
            (f64::INFINITY, 1.0),
            (-1.0, 5.0),
        ] {
            s.points.push(Point {
                x,
                y,
                label: "hostile".into(),
            });
        }
        s.frontier.push(4); // the 1.5e308 point, as Check 14 would see it
        let svg = pareto(&[s], "run 7 · abc");
        assert!(svg.contains("5 points not plotted: not a number from 0 to 1e9"));
        assert_eq!(svg.matches(r##"class="point "##).count(), 4);
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
        assert!(svg.len() < 20_000, "{} bytes", svg.len());
    }

    #[test]
    fn curves_and_points_are_capped() {
        let mut s = series();
        s.points = (0..3 * MAX_POINTS)
            .map(|i| Point {
                x: i as f64,
                y: i as f64,
                label: String::new(),
            })
            .collect();
        s.frontier = (0..s.points.len()).collect();
        let many = vec![s; MAX_SERIES + 3];
        let svg = pareto(&many, "run 1");
        assert_eq!(svg.matches(r##"<g class="series""##).count(), MAX_SERIES);
        assert_eq!(
            svg.matches(r##"class="point frontier""##).count(),
            MAX_SERIES * MAX_POINTS
        );
        assert!(svg.contains("only the first 500 of 1500 points are plotted"));
        assert!(svg.contains("(only the first 32 of 35 curves are plotted)"));
    }

    #[test]
    fn steps_are_round() {
        assert_eq!(step(0.0), 1.0);
        assert_eq!(step(9.0), 2.0);
        assert_eq!(step(260.0), 100.0);
        assert_eq!(step(4200.0), 1000.0);
    }
}
