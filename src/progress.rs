//! Terminal niceties of the command line: a progress bar on stderr for
//! long local runs and colour on stdout, each only when that stream is a
//! terminal (and colour only without `NO_COLOR`). The server never draws:
//! the command line switches the bar on.
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Lets bars draw when stderr is a terminal (`sweepgate lint`, `check`,
/// `matrix`); `SWEEPGATE_PROGRESS=0` keeps them off.
pub fn enable_on_terminal() {
    let off = std::env::var("SWEEPGATE_PROGRESS").is_ok_and(|v| v == "0");
    ENABLED.store(!off && std::io::stderr().is_terminal(), Ordering::Relaxed);
}

/// Whether stdout gets ANSI colour.
pub fn colour_stdout() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stdout().is_terminal()
}

/// `text` in bold red, yellow or plain, by the word it starts its
/// severity with (`error`, `warning`).
pub fn paint_severity(line: &str) -> String {
    let code = if line.contains(": error[") {
        "1;31"
    } else if line.contains(": warning[") {
        "33"
    } else {
        return line.to_owned();
    };
    format!("\x1b[{code}m{line}\x1b[0m")
}

/// A bar that redraws at most ten times a second and clears itself.
pub struct Bar {
    label: String,
    total: usize,
    done: AtomicUsize,
    drawn: Mutex<Option<Instant>>,
    on: bool,
}

impl Bar {
    /// A bar over `total` steps; draws nothing for small or silent runs.
    pub fn new(label: impl Into<String>, total: usize) -> Self {
        Self {
            label: label.into(),
            total,
            done: AtomicUsize::new(0),
            drawn: Mutex::new(None),
            on: ENABLED.load(Ordering::Relaxed) && total >= 20,
        }
    }

    pub fn inc(&self) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if !self.on {
            return;
        }
        let Ok(mut last) = self.drawn.lock() else {
            return;
        };
        if last.is_some_and(|t| t.elapsed() < Duration::from_millis(100)) && done < self.total {
            return;
        }
        *last = Some(Instant::now());
        let _ = write!(
            std::io::stderr(),
            "\r{}",
            line(&self.label, done, self.total)
        );
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        if self.on && self.drawn.lock().is_ok_and(|d| d.is_some()) {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}

/// `label [#####-----] done/total`.
fn line(label: &str, done: usize, total: usize) -> String {
    const WIDTH: usize = 30;
    let filled = (done.min(total) * WIDTH)
        .checked_div(total)
        .unwrap_or(WIDTH);
    format!(
        "{label} [{}{}] {done}/{total}",
        "#".repeat(filled),
        "-".repeat(WIDTH - filled)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_fills_with_progress() {
        assert_eq!(
            line("reading", 0, 10),
            format!("reading [{}] 0/10", "-".repeat(30))
        );
        assert_eq!(
            line("reading", 5, 10),
            format!("reading [{}{}] 5/10", "#".repeat(15), "-".repeat(15))
        );
        assert_eq!(
            line("reading", 0, 0),
            format!("reading [{}] 0/0", "#".repeat(30))
        );
    }

    #[test]
    fn only_errors_and_warnings_are_painted() {
        assert_eq!(
            paint_severity("a.sh:3: error[L01] missing"),
            "\x1b[1;31ma.sh:3: error[L01] missing\x1b[0m"
        );
        assert_eq!(
            paint_severity("a.sh:3: warning[L06] unused"),
            "\x1b[33ma.sh:3: warning[L06] unused\x1b[0m"
        );
        assert_eq!(
            paint_severity("no recipe lint findings"),
            "no recipe lint findings"
        );
    }

    #[test]
    fn bars_stay_silent_unless_enabled() {
        // Tests never run with ENABLED set: the bar counts but draws nothing.
        let b = Bar::new("x", 100);
        assert!(!b.on);
        b.inc();
        assert_eq!(b.done.load(Ordering::Relaxed), 1);
    }
}
