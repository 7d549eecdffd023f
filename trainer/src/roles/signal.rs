//! SIGINT/SIGTERM: a flag that every role polls (each at least once a second), and a
//! second signal that exits at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

static SIGNAL: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Installs a SIGINT/SIGTERM handler (once per process) that sets the returned flag;
/// a second signal exits at once with status 130. The flag is cleared on each call.
pub fn install_signal_handler() -> Arc<AtomicBool> {
    let flag = SIGNAL.get_or_init(|| {
        let f = Arc::new(AtomicBool::new(false));
        let f2 = f.clone();
        let _ = ctrlc::set_handler(move || {
            if f2.swap(true, Ordering::SeqCst) {
                progress::line("\nkoma: second interrupt, exiting without saving");
                std::process::exit(130);
            }
            progress::line("\nkoma: interrupt: finishing cleanly (again to exit at once)");
        });
        f
    });
    flag.store(false, Ordering::SeqCst);
    flag.clone()
}

/// Sleeps `total`, waking early (within 50 ms) when `stop` is set. Returns whether it was.
pub fn sleep_unless(stop: &AtomicBool, total: std::time::Duration) -> bool {
    let end = std::time::Instant::now() + total;
    while std::time::Instant::now() < end {
        if stop.load(Ordering::Relaxed) {
            return true;
        }
        std::thread::sleep((end - std::time::Instant::now()).min(std::time::Duration::from_millis(50)));
    }
    stop.load(Ordering::Relaxed)
}
