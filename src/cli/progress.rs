//! The terminal's side of a run's progress: the description line, a progress bar (not drawn
//! with --quiet or when stderr is not a terminal), notes and the closing line, on stderr.

use std::sync::Mutex;

use crate::experiment::{Level, Progress, RunSummary};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Terminal {
    quiet: bool,
    bar: Mutex<Option<ProgressBar>>,
}

impl Terminal {
    pub fn new(quiet: bool) -> Terminal {
        Terminal {
            quiet,
            bar: Mutex::new(None),
        }
    }

    fn bar(&self) -> Option<ProgressBar> {
        self.bar.lock().ok().and_then(|b| b.clone())
    }
}

impl Progress for Terminal {
    fn note(&self, level: Level, text: &str) {
        let line = format!("{}: {text}", level.as_str());
        match self.bar() {
            Some(b) => b.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }

    fn start(&self, line: &str, cells: usize) {
        eprintln!("{line}");
        let bar = ProgressBar::new(cells as u64);
        if self.quiet {
            bar.set_draw_target(ProgressDrawTarget::hidden());
        }
        bar.set_style(
            ProgressStyle::with_template(
                "{elapsed_precise} [{bar:40}] {pos}/{len} cells  {per_sec}  ETA {eta}",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        if let Ok(mut b) = self.bar.lock() {
            *b = Some(bar);
        }
    }

    fn advance(&self, cells: usize) {
        if let Some(b) = self.bar() {
            b.inc(cells as u64);
        }
    }

    fn finish(&self, summary: Option<&RunSummary>) {
        if let Some(b) = self.bar.lock().ok().and_then(|mut b| b.take()) {
            b.finish_and_clear();
        }
        if let Some(s) = summary {
            eprintln!(
                "ran {} cells in {:.2} s ({:.0} cells/s); {} were already finished; results in {}",
                s.ran,
                s.seconds,
                s.ran as f64 / s.seconds.max(1e-9),
                s.already_done,
                s.out.display()
            );
        }
    }
}
