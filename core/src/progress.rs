//! Progress and cancellation for long computations, without threading a handle through every
//! function.
//!
//! The caller (the window's computation thread) runs a computation inside [`scope`] with a shared
//! [`Progress`]; long loops in `core` call [`report`] every so often, which records how far they
//! are and returns [`Error::Cancelled`] once [`Progress::cancel`] was called, so the loop stops
//! with `?`. Outside a scope (CLI, tests, benchmarks) [`report`] costs one thread-local read and
//! never cancels.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::Error;

/// How far a computation is, and whether it should stop. Shared between the computing thread and
/// the one that shows progress.
#[derive(Debug, Default)]
pub struct Progress {
    done: AtomicU64,
    total: AtomicU64,
    cancelled: AtomicBool,
}

impl Progress {
    /// A fresh handle: nothing done, not cancelled.
    pub fn new() -> Arc<Self> {
        Arc::new(Progress::default())
    }

    /// Asks the computation to stop at its next [`report`].
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    /// Whether [`Progress::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    /// The fraction done in 0..=1, or `None` before the computation reported a total.
    pub fn fraction(&self) -> Option<f32> {
        let total = self.total.load(Ordering::Relaxed);
        (total > 0)
            .then(|| (self.done.load(Ordering::Relaxed) as f64 / total as f64).min(1.0) as f32)
    }
}

/// A thread's current handle, and whether its reports move the fraction (a helper's do not).
#[derive(Debug, Clone)]
struct Current {
    progress: Arc<Progress>,
    reports: bool,
}

thread_local! {
    static CURRENT: RefCell<Option<Current>> = const { RefCell::new(None) };
}

/// Runs `f` with `progress` as this thread's current handle (restored afterwards, also on panic
/// unwinding through `f`).
pub fn scope<R>(progress: Arc<Progress>, f: impl FnOnce() -> R) -> R {
    with_current(
        Some(Current {
            progress,
            reports: true,
        }),
        f,
    )
}

/// This thread's current handle (`None` outside a [`scope`]), to hand to a thread that helps
/// the same computation ([`helper_scope`]).
pub fn current() -> Option<Arc<Progress>> {
    CURRENT.with(|c| c.borrow().as_ref().map(|c| c.progress.clone()))
}

/// Runs `f` on a thread that helps the computation whose handle is `progress` ([`current`] of
/// the computation's own thread): [`report`] there returns [`Error::Cancelled`] once that
/// computation is cancelled, but leaves the fraction to the computation's thread, so two
/// threads never make the progress bar jump between their own totals.
pub fn helper_scope<R>(progress: Option<Arc<Progress>>, f: impl FnOnce() -> R) -> R {
    with_current(
        progress.map(|progress| Current {
            progress,
            reports: false,
        }),
        f,
    )
}

fn with_current<R>(current: Option<Current>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Current>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let prev = self.0.take();
            CURRENT.with(|c| *c.borrow_mut() = prev);
        }
    }
    let prev = CURRENT.with(|c| std::mem::replace(&mut *c.borrow_mut(), current));
    let _restore = Restore(prev);
    f()
}

/// Records that `done` of `total` units of the current computation are finished.
///
/// # Errors
/// [`Error::Cancelled`] when the current scope's handle was cancelled.
pub fn report(done: u64, total: u64) -> Result<(), Error> {
    CURRENT.with(|c| match &*c.borrow() {
        Some(Current {
            progress: p,
            reports,
        }) => {
            if *reports {
                p.total.store(total, Ordering::Relaxed);
                p.done.store(done, Ordering::Relaxed);
            }
            if p.is_cancelled() {
                Err(Error::Cancelled)
            } else {
                Ok(())
            }
        }
        None => Ok(()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_outside_a_scope_never_cancels() {
        assert_eq!(report(1, 2), Ok(()));
    }

    #[test]
    fn cancel_stops_the_loop_and_fraction_follows_reports() {
        let p = Progress::new();
        let seen = scope(p.clone(), || {
            for i in 0..10u64 {
                report(i, 10)?;
                if i == 3 {
                    p.cancel();
                }
            }
            Ok::<_, Error>(())
        });
        assert_eq!(seen, Err(Error::Cancelled));
        assert_eq!(p.fraction(), Some(0.4));
        // The scope is gone: this thread no longer reports to `p`.
        assert_eq!(report(9, 10), Ok(()));
        assert_eq!(p.fraction(), Some(0.4));
    }

    #[test]
    fn a_helper_stops_at_the_same_cancel_without_moving_the_fraction() {
        let p = Progress::new();
        scope(p.clone(), || {
            report(1, 4).expect("not cancelled");
            let handle = current();
            let (reported, seen) = std::sync::mpsc::channel();
            let helper = std::thread::spawn(move || {
                helper_scope(handle, || {
                    reported.send(report(3, 100)).expect("main thread waits");
                    while !matches!(report(3, 100), Err(Error::Cancelled)) {
                        std::thread::yield_now();
                    }
                })
            });
            assert_eq!(seen.recv().expect("helper reported"), Ok(()));
            // The helper's report of 3 / 100 left this thread's 1 / 4.
            assert_eq!(p.fraction(), Some(0.25));
            p.cancel();
            helper.join().expect("the helper stops at the cancel");
            assert_eq!(p.fraction(), Some(0.25));
        });
    }
}
