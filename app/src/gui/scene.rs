//! One scene in the window: its parameter values, the computation running off the UI thread
//! (cancelled when a newer value supersedes it), the last good result and the last few results
//! (a slider moved back shows its result at once), the stepper, the view and its GPU panel.

use std::sync::Arc;
use std::sync::mpsc;
use std::time::Instant;

use warpscope_core::Error;
use warpscope_core::params::ParamValues;
use warpscope_core::scene::{Input, Scene};

use super::errors::{ErrorEntry, error_entry};
use crate::views;
use crate::widgets::gpu;
use crate::widgets::stepper::Stepper;

struct Job {
    rx: mpsc::Receiver<Result<views::Output, Error>>,
    started: Instant,
    progress: Arc<warpscope_core::progress::Progress>,
    values: ParamValues,
}

/// Results kept per scene, so moving a slider back to a value it had recently shows that result
/// at once instead of recomputing it.
const RECENT_RESULTS: usize = 4;

/// One scene's state in the window.
pub struct SceneState {
    /// The registry entry.
    pub scene: &'static Scene,
    /// Current parameter values (may be invalid; the error says why).
    pub values: ParamValues,
    /// The user's own input the scene is computed on (set with [`SceneState::set_input`]).
    pub input: Option<Input>,
    /// The last good result.
    pub computed: Option<views::Output>,
    /// The last error, in both languages.
    pub error: Option<ErrorEntry>,
    /// Where the stepper stands.
    pub stepper: Stepper,
    /// The view that draws the result, with its own state (which run, which request, zoom …).
    pub view: Box<dyn views::AnyView>,
    /// The registry line of the view.
    pub entry: &'static views::Entry,
    /// The real-GPU run of this scene's kernel, if it has one.
    pub gpu: gpu::GpuPanel,
    /// The *Your input* editor's text, path and message.
    pub editor: super::input::InputEditor,
    job: Option<Job>,
    pub(crate) dirty: bool,
    /// The last [`RECENT_RESULTS`] results with the values that produced them, newest last.
    recent: std::collections::VecDeque<(ParamValues, views::Output)>,
}

impl SceneState {
    /// A scene at its lecture defaults, not yet computed.
    pub fn new(scene: &'static Scene) -> Self {
        let entry = views::entry(scene.id);
        SceneState {
            scene,
            values: scene.defaults(),
            input: None,
            computed: None,
            error: None,
            stepper: Stepper::default(),
            view: entry.make(),
            entry,
            gpu: gpu::GpuPanel::default(),
            editor: super::input::InputEditor::default(),
            job: None,
            dirty: true,
            recent: std::collections::VecDeque::new(),
        }
    }

    /// Starts a computation when parameters changed and none is running; collects a finished one.
    pub(crate) fn poll(&mut self, ctx: &egui::Context) {
        if let Some(job) = &self.job {
            match job.rx.try_recv() {
                Ok(Ok(c)) => {
                    if let Some(done) = self.job.take() {
                        self.remember(done.values, c.clone());
                    }
                    self.show_result(c);
                }
                Ok(Err(Error::Cancelled)) => self.job = None,
                Ok(Err(e)) => {
                    self.error = Some(error_entry(self.scene, &e));
                    self.job = None;
                }
                Err(mpsc::TryRecvError::Empty) => {
                    ctx.request_repaint_after(std::time::Duration::from_millis(30))
                }
                Err(mpsc::TryRecvError::Disconnected) => {
                    self.error = Some(ErrorEntry::general(
                        "the computation stopped unexpectedly",
                        "计算意外中止",
                    ));
                    self.job = None;
                }
            }
        }
        if self.dirty {
            // A newer value supersedes the running computation: stop it at its next progress
            // report instead of waiting for a result nobody will look at.
            if let Some(old) = self.job.take() {
                old.progress.cancel();
            }
            self.dirty = false;
            // Range errors are known at once: show them now, and drop a stale one as soon as the
            // values are valid again (not when the new result arrives).
            if let Err(e) = self.values.clone().validated(self.scene.params) {
                self.error = Some(error_entry(self.scene, &e));
                return;
            }
            self.error = None;
            if let Some(c) = self.recalled() {
                self.show_result(c);
                return;
            }
            let (tx, rx) = mpsc::channel();
            let (scene, entry, values, input, ctx2) = (
                self.scene,
                self.entry,
                self.values.clone(),
                self.input.clone(),
                ctx.clone(),
            );
            let progress = warpscope_core::progress::Progress::new();
            let p2 = progress.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("compute {}", scene.id))
                .spawn(move || {
                    let r = warpscope_core::progress::scope(p2, || {
                        entry.compute(scene, values, input.as_deref())
                    });
                    let _ = tx.send(r);
                    ctx2.request_repaint();
                });
            match spawned {
                Ok(_) => {
                    self.job = Some(Job {
                        rx,
                        started: Instant::now(),
                        progress,
                        values: self.values.clone(),
                    })
                }
                Err(e) => {
                    self.error = Some(ErrorEntry::general(
                        format!("could not start the computation: {e}"),
                        format!("无法开始计算：{e}"),
                    ))
                }
            }
        }
    }

    /// A recent result for the current values. Scenes that read a file are never recalled: the
    /// file may have changed since.
    fn recalled(&self) -> Option<views::Output> {
        let reads_file = self
            .scene
            .params
            .iter()
            .any(|p| matches!(p.kind, warpscope_core::params::ParamKind::Text { .. }));
        if reads_file {
            return None;
        }
        self.recent
            .iter()
            .find(|(v, _)| *v == self.values)
            .map(|(_, c)| c.clone())
    }

    fn remember(&mut self, values: ParamValues, c: views::Output) {
        self.recent.retain(|(v, _)| *v != values);
        if self.recent.len() == RECENT_RESULTS {
            self.recent.pop_front();
        }
        self.recent.push_back((values, c));
    }

    fn show_result(&mut self, c: views::Output) {
        let len = self.view.events(&c);
        self.computed = Some(c);
        self.error = None;
        self.stepper.pos = self.stepper.pos.min(len.saturating_sub(1));
    }

    /// Computes the scene on `input` from now on (`None`: its own generated data). Results
    /// remembered for the old input are dropped: they hold other numbers.
    pub fn set_input(&mut self, input: Option<Input>) {
        self.input = input;
        self.recent.clear();
        self.dirty = true;
    }

    /// Stops the running computation (the last result stays on screen).
    pub fn cancel(&mut self) {
        if let Some(job) = self.job.take() {
            job.progress.cancel();
        }
    }

    /// When the running computation started and how far it is (`None`: no progress reported
    /// yet); `None` when no computation runs.
    pub fn running(&self) -> Option<(Instant, Option<f32>)> {
        self.job
            .as_ref()
            .map(|j| (j.started, j.progress.fraction()))
    }

    /// Whether a computation is running off the UI thread.
    pub fn computing(&self) -> bool {
        self.job.is_some()
    }

    /// Computes synchronously (tests and headless export).
    pub fn compute_now(&mut self) {
        self.dirty = false;
        self.cancel();
        if let Some(c) = self.recalled() {
            self.show_result(c);
            return;
        }
        match self
            .entry
            .compute(self.scene, self.values.clone(), self.input.as_deref())
        {
            Ok(c) => {
                self.remember(self.values.clone(), c.clone());
                self.show_result(c);
            }
            Err(e) => self.error = Some(error_entry(self.scene, &e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use warpscope_core::scene;

    #[test]
    fn a_newer_value_cancels_the_running_computation_and_cancel_keeps_the_last_result() {
        let ctx = egui::Context::default();
        let scene = scene::find("memory-allocator").expect("registered");
        let mut st = SceneState::new(scene);
        st.compute_now();
        assert!(st.computed.is_some(), "{:?}", st.error);
        let before = st.computed.clone();
        // The largest run (seconds, not milliseconds) so no job finishes between two polls.
        let top = scene
            .params
            .iter()
            .find(|p| p.name == "batches")
            .expect("batches");
        let max = match top.kind {
            warpscope_core::params::ParamKind::Int { max, .. } => max,
            _ => panic!("batches is an integer"),
        };
        st.values
            .set(scene.params, "batches", &max.to_string())
            .expect("in range");
        st.dirty = true;
        st.poll(&ctx);
        let first = st.job.as_ref().expect("a job runs").progress.clone();
        st.dirty = true;
        st.poll(&ctx);
        assert!(first.is_cancelled(), "the superseded job was not cancelled");
        let second = st.job.as_ref().expect("the new job runs").progress.clone();
        assert!(!second.is_cancelled());
        st.cancel();
        assert!(second.is_cancelled() && !st.computing());
        assert!(Arc::ptr_eq(
            st.computed.as_ref().expect("kept"),
            before.as_ref().expect("had one")
        ));
        // Back to the defaults: the earlier result is shown at once, with no new job.
        st.values = scene.defaults();
        st.dirty = true;
        st.poll(&ctx);
        assert!(!st.computing(), "the defaults were recomputed");
        assert!(Arc::ptr_eq(
            st.computed.as_ref().expect("recalled"),
            before.as_ref().expect("had one")
        ));
    }
}
