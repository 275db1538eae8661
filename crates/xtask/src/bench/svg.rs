//! A log-log line plot as hand-written SVG (no dependencies).
use std::fmt::Write;

/// One line of a plot: `(x, y)` points, x and y positive.
pub(crate) struct Series<'a> {
    pub name: &'a str,
    pub color: &'a str,
    pub points: Vec<(f64, f64)>,
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn fmt_num(v: f64) -> String {
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
pub(crate) fn plot(title: &str, x_label: &str, y_label: &str, series: &[Series<'_>]) -> String {
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
            fmt_num(x)
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
                    fmt_num(y)
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
                fmt_num(*x),
                fmt_num(*y)
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
