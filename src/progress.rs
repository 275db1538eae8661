//! Terminal niceties of the command line: a progress bar on stderr for
//! long local runs and colour on stdout, each only when that stream is a
//! terminal (and colour only without `NO_COLOR`). The server never draws:
//! the command line switches the bar on.
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Lets bars draw when stderr is a terminal (`sweepgate lint`, `check`,
/// `matrix`); `SWEEPGATE_PROGRESS=0` keeps them off.
pub(crate) fn enable_on_terminal() {
    let off = std::env::var("SWEEPGATE_PROGRESS").is_ok_and(|v| v == "0");
    ENABLED.store(!off && std::io::stderr().is_terminal(), Ordering::Relaxed);
}

/// Whether stdout gets ANSI colour.
pub(crate) fn colour_stdout() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stdout().is_terminal()
}

/// `text` in bold red, yellow or plain, by the word it starts its
/// severity with (`error`, `warning`).
pub(crate) fn paint_severity(line: &str) -> String {
    let code = if line.contains(": error[") {
        "1;31"
    } else if line.contains(": warning[") {
        "33"
    } else {
        return line.to_owned();
    };
    format!("\x1b[{code}m{line}\x1b[0m")
}

/// A progress bar on stderr (indicatif: redraws at most a few times a
/// second and clears itself when dropped).
pub(crate) struct Bar {
    bar: indicatif::ProgressBar,
}

impl Bar {
    /// A bar over `total` steps; draws nothing for small or silent runs.
    pub(crate) fn new(label: impl Into<String>, total: usize) -> Self {
        let on = ENABLED.load(Ordering::Relaxed) && total >= 20;
        let bar = if on {
            indicatif::ProgressBar::new(total as u64)
        } else {
            indicatif::ProgressBar::hidden()
        };
        bar.set_length(total as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("#-"),
        );
        bar.set_message(label.into());
        Self { bar }
    }

    pub(crate) fn inc(&self) {
        self.bar.inc(1);
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(b.bar.is_hidden());
        b.inc();
        assert_eq!(b.bar.position(), 1);
        assert_eq!(b.bar.length(), Some(100));
    }
}
