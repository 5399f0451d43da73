//! The host side every kernel shares: upload buffers, build pipelines (with shader errors
//! captured as values), dispatch, read back, verify and time.
//!
//! Timing: when the device has `TIMESTAMP_QUERY`, each timed run is one compute pass holding
//! every dispatch of a variant, with a timestamp written at the pass's beginning and end
//! (`ComputePassTimestampWrites`); ticks × `Queue::get_timestamp_period` ns give the device
//! time. Otherwise the host measures submit → `Device::poll(wait)` with a wall clock
//! ([`TimingMethod::Host`], which includes submission and synchronisation overhead — the
//! [`Timing::caveat`] says so). Each figure is the median of `runs` timed runs after one
//! untimed run (the verification run).

use std::borrow::Cow;
use std::time::Instant;

use serde::Serialize;

use crate::DeviceContext;

/// Why a kernel run failed. Every variant carries a message a user can act on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KernelError {
    /// The kernel name is not in [`crate::KERNELS`].
    #[error("unknown kernel `{name}`; expected one of: {known}")]
    UnknownKernel {
        /// The name asked for.
        name: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// A run option is malformed or out of range.
    #[error("invalid option {name} = {value}: {expected}")]
    InvalidOption {
        /// Option name (`rows`, `cols`, `runs`, …).
        name: String,
        /// The value given.
        value: String,
        /// What is accepted.
        expected: String,
    },
    /// The WGSL module or the pipeline failed to compile or validate.
    #[error("shader `{label}` failed to compile or validate on {adapter}: {message}")]
    Shader {
        /// Pipeline label (`kernel/entry`).
        label: String,
        /// Adapter name.
        adapter: String,
        /// wgpu / naga's message.
        message: String,
    },
    /// The device reported an error while running a kernel (validation, out of memory, lost).
    #[error("GPU error while running `{kernel}` on {adapter}: {message}")]
    Device {
        /// Kernel name.
        kernel: String,
        /// Adapter name.
        adapter: String,
        /// wgpu's message.
        message: String,
    },
    /// A buffer would exceed the adapter's limits; refused before allocating.
    #[error(
        "`{kernel}` needs a {bytes}-byte buffer `{buffer}` but {adapter} allows at most {limit} bytes per storage binding; use fewer rows or columns"
    )]
    TooLarge {
        /// Kernel name.
        kernel: String,
        /// Buffer label.
        buffer: String,
        /// Bytes needed.
        bytes: u64,
        /// The adapter's limit (bytes).
        limit: u64,
        /// Adapter name.
        adapter: String,
    },
    /// Mapping a buffer for readback failed.
    #[error("reading results of `{kernel}` back from the device failed: {message}")]
    Readback {
        /// Kernel name.
        kernel: String,
        /// The reason.
        message: String,
    },
    /// `warpscope-core` refused to compute the reference (its message names the parameter).
    #[error("the core reference for `{kernel}` failed: {message}")]
    Core {
        /// Kernel name.
        kernel: String,
        /// core's error message.
        message: String,
    },
}

/// How a [`Timing`] was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TimingMethod {
    /// GPU timestamp queries at the beginning and end of the compute pass (device time).
    GpuTimestamps,
    /// Host wall clock around submit + wait (includes submission and sync overhead).
    Host,
}

/// Median-of-N timing of one variant (all its dispatches, in one compute pass).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timing {
    /// How it was measured (`gpu-timestamps` or `host`).
    pub timing: TimingMethod,
    /// Why the figure is not device time, when it is not (host timing), else `None`.
    pub caveat: Option<String>,
    /// Timed runs (after one untimed run).
    pub runs: u32,
    /// Median over the runs, µs.
    pub median_us: f64,
    /// Fastest run, µs.
    pub min_us: f64,
    /// Slowest run, µs.
    pub max_us: f64,
}

/// Tolerance of a comparison: element i passes when |got − want| ≤ `abs` + `rel`·|want|.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Tolerance {
    /// Storage / arithmetic dtype the tolerance is for (`f32`).
    pub dtype: &'static str,
    /// Absolute part.
    pub abs: f64,
    /// Relative part.
    pub rel: f64,
}

impl Tolerance {
    /// f32 storage and arithmetic: abs 1e-5, rel 1e-4 — about 10³ unit roundoffs (2⁻²⁴ ≈ 6e-8)
    /// relative, room for a reduction order different from the reference's over rows of up
    /// to a few thousand elements.
    pub const F32: Tolerance = Tolerance {
        dtype: "f32",
        abs: 1e-5,
        rel: 1e-4,
    };

    /// FP16 storage (values rounded to FP16 after an f32 computation): one FP16 unit in the
    /// last place, 2⁻¹⁰ relative (the device's f32 → f16 conversion may round either way of a
    /// tie or differ by one f32 rounding before it), and 2⁻²⁴ absolute (FP16's smallest
    /// subnormal) for values near zero.
    pub const F16: Tolerance = Tolerance {
        dtype: "f16",
        abs: 5.960_464_477_539_063e-8,
        rel: 9.765_625e-4,
    };

    /// f32 sums of `n` terms of magnitude about 1 (the ∇γ/∇β column sums over `n` rows):
    /// recursive summation's error bound grows as n·u (u = 2⁻²⁴), so the absolute part is
    /// max(1e-5, n·2⁻²⁴) — 2.4e-4 for the 4096 rows of the default shape.
    pub fn f32_sum(n: f64) -> Tolerance {
        Tolerance {
            abs: Self::F32.abs.max(n * 2f64.powi(-24)),
            ..Self::F32
        }
    }
}

/// Device result vs reference.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verification {
    /// What the result was compared with (e.g. `warpscope_core::softmax::backward_row (f64)`).
    pub reference: String,
    /// Elements compared.
    pub elements: usize,
    /// max |got − want|.
    pub max_abs_error: f64,
    /// max |got − want| / max(|want|, tolerance.abs).
    pub max_rel_error: f64,
    /// The tolerance applied.
    pub tolerance: Tolerance,
    /// Whether every element is within tolerance (and finite).
    pub passed: bool,
    /// Index of the element with the largest abs error.
    pub worst_index: usize,
}

impl Verification {
    /// Compares `got` (device output) with `want` (reference). A length mismatch or a
    /// non-finite value fails.
    pub fn compare(reference: &str, got: &[f32], want: &[f64], tolerance: Tolerance) -> Self {
        let mut v = Verification {
            reference: reference.to_owned(),
            elements: got.len().min(want.len()),
            max_abs_error: 0.0,
            max_rel_error: 0.0,
            tolerance,
            passed: got.len() == want.len(),
            worst_index: 0,
        };
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            let g = f64::from(*g);
            let d = (g - w).abs();
            if !d.is_finite() {
                v.passed = false;
                v.max_abs_error = f64::INFINITY;
                v.worst_index = i;
                continue;
            }
            if d > v.max_abs_error {
                v.max_abs_error = d;
                v.worst_index = i;
            }
            v.max_rel_error = v.max_rel_error.max(d / w.abs().max(tolerance.abs));
            if d > tolerance.abs + tolerance.rel * w.abs() {
                v.passed = false;
            }
        }
        v
    }
}

/// One variant's device result.
#[derive(Debug, Clone, PartialEq)]
pub struct VariantOutput {
    /// Variant name (`fused`, `unfused`, `autograd`, `per-tensor`, `linked`, …).
    pub name: &'static str,
    /// Entry points launched, in order.
    pub kernels: Vec<String>,
    /// The device's result (the kernel's output tensor(s), concatenated).
    pub output: Vec<f32>,
    /// Median timing.
    pub timing: Timing,
    /// Bytes the variant's kernels read and write (each tensor once per kernel).
    pub bytes_moved: u64,
}

/// One dispatch of a variant: a pipeline, its bind group, the grid, and its DRAM ledger.
#[derive(Debug)]
pub struct Dispatch {
    /// Kernel (entry point) name.
    pub name: String,
    /// The pipeline.
    pub pipeline: wgpu::ComputePipeline,
    /// Bind group 0.
    pub bind_group: wgpu::BindGroup,
    /// Workgroups in x, y, z.
    pub groups: [u32; 3],
    /// Bytes this kernel reads from device memory (each input tensor once).
    pub bytes_read: u64,
    /// Bytes it writes.
    pub bytes_written: u64,
}

/// One dispatch as a compute pass records it: its pipeline, its bind groups and its grid.
/// [`Runner::run_once`] and [`Runner::time`] take any of them (the lecture's kernels bind
/// group 0 only; the kernel lab binds whatever groups a user's kernel declares).
pub trait Encode {
    /// Sets the pipeline and bind groups on `pass` and dispatches.
    fn encode(&self, pass: &mut wgpu::ComputePass<'_>);
}

impl Encode for Dispatch {
    fn encode(&self, pass: &mut wgpu::ComputePass<'_>) {
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.bind_group, &[]);
        pass.dispatch_workgroups(self.groups[0], self.groups[1], self.groups[2]);
    }
}

/// Total bytes (read + written) of a chain of dispatches.
pub fn bytes_moved(dispatches: &[Dispatch]) -> u64 {
    dispatches
        .iter()
        .map(|d| d.bytes_read + d.bytes_written)
        .sum()
}

/// The most workgroups one dimension of a dispatch may have (WebGPU's default limit).
pub const MAX_GROUPS: u32 = 65_535;

/// Workgroups for `n` items at `per_group` items each, capped at [`MAX_GROUPS`] (kernels use
/// grid-stride loops, so the cap only serialises work).
pub fn groups_for(n: u64, per_group: u64) -> u32 {
    let g = n.div_ceil(per_group.max(1)).max(1);
    u32::try_from(g.min(u64::from(MAX_GROUPS))).unwrap_or(MAX_GROUPS)
}

/// f32 slice → little-endian bytes.
pub fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// u32 slice → little-endian bytes.
pub fn u32_bytes(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The host runner for one kernel on one device.
pub struct Runner<'a> {
    /// The device.
    pub ctx: &'a DeviceContext,
    /// Kernel name, for error messages.
    pub kernel: &'static str,
}

impl<'a> Runner<'a> {
    /// A runner for `kernel` on `ctx`.
    pub fn new(ctx: &'a DeviceContext, kernel: &'static str) -> Self {
        Runner { ctx, kernel }
    }

    fn device_error(&self, message: String) -> KernelError {
        KernelError::Device {
            kernel: self.kernel.to_owned(),
            adapter: self.ctx.report.name.clone(),
            message,
        }
    }

    /// Runs `f` inside validation and out-of-memory error scopes and turns a captured error
    /// into [`KernelError::Device`] (so no wgpu error reaches the default panicking handler).
    pub fn scoped<T>(&self, f: impl FnOnce() -> Result<T, KernelError>) -> Result<T, KernelError> {
        let device = &self.ctx.device;
        let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let out = f();
        let v = pollster::block_on(validation.pop());
        let o = pollster::block_on(oom.pop());
        let out = out?;
        if let Some(e) = v.or(o) {
            return Err(self.device_error(e.to_string()));
        }
        Ok(out)
    }

    fn check_size(&self, label: &str, bytes: u64) -> Result<(), KernelError> {
        let limits = self.ctx.device.limits();
        let limit = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size);
        if bytes > limit {
            return Err(KernelError::TooLarge {
                kernel: self.kernel.to_owned(),
                buffer: label.to_owned(),
                bytes,
                limit,
                adapter: self.ctx.report.name.clone(),
            });
        }
        Ok(())
    }

    /// A storage buffer (read/write, copy source and destination) holding `bytes` (padded with
    /// zeros to a multiple of 4 bytes, at least 4).
    ///
    /// # Errors
    /// [`KernelError::TooLarge`] beyond the adapter's storage-binding limit.
    pub fn storage_bytes(&self, label: &str, bytes: &[u8]) -> Result<wgpu::Buffer, KernelError> {
        let size = (bytes.len() as u64).max(4).next_multiple_of(4);
        self.check_size(label, size)?;
        let buf = self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        if !bytes.is_empty() {
            // Writes must be a multiple of 4 bytes (COPY_BUFFER_ALIGNMENT): pad with zeros.
            if bytes.len().is_multiple_of(4) {
                self.ctx.queue.write_buffer(&buf, 0, bytes);
            } else {
                let mut padded = bytes.to_vec();
                padded.resize(bytes.len().next_multiple_of(4), 0);
                self.ctx.queue.write_buffer(&buf, 0, &padded);
            }
        }
        Ok(buf)
    }

    /// A storage buffer holding `data` (f32, 4 bytes each).
    ///
    /// # Errors
    /// [`KernelError::TooLarge`].
    pub fn storage(&self, label: &str, data: &[f32]) -> Result<wgpu::Buffer, KernelError> {
        self.storage_bytes(label, &f32_bytes(data))
    }

    /// A zero-filled storage buffer of `n` f32 values.
    ///
    /// # Errors
    /// [`KernelError::TooLarge`].
    pub fn zeros(&self, label: &str, n: usize) -> Result<wgpu::Buffer, KernelError> {
        let size = (n as u64 * 4).max(4);
        self.check_size(label, size)?;
        Ok(self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        }))
    }

    /// A uniform buffer holding 32-bit words (f32 values as `to_bits`), padded to 16 bytes.
    pub fn uniform(&self, label: &str, words: &[u32]) -> wgpu::Buffer {
        let mut w = words.to_vec();
        while w.is_empty() || !w.len().is_multiple_of(4) {
            w.push(0);
        }
        let buf = self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: w.len() as u64 * 4,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        self.ctx.queue.write_buffer(&buf, 0, &u32_bytes(&w));
        buf
    }

    /// Compiles `source` and builds the compute pipeline for `entry`, with pipeline-overridable
    /// `constants`; layout derived from the shader (bind group 0).
    ///
    /// # Errors
    /// [`KernelError::Shader`] with naga's / wgpu's message.
    pub fn pipeline(
        &self,
        source: &str,
        entry: &str,
        constants: &[(&str, f64)],
    ) -> Result<wgpu::ComputePipeline, KernelError> {
        let label = format!("{}/{entry}", self.kernel);
        let device = &self.ctx.device;
        let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(&label),
            source: wgpu::ShaderSource::Wgsl(Cow::Borrowed(source)),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(&label),
            layout: None,
            module: &module,
            entry_point: Some(entry),
            compilation_options: wgpu::PipelineCompilationOptions {
                constants,
                ..Default::default()
            },
            cache: None,
        });
        let v = pollster::block_on(validation.pop());
        let o = pollster::block_on(oom.pop());
        match v.or(o) {
            Some(e) => Err(KernelError::Shader {
                label,
                adapter: self.ctx.report.name.clone(),
                message: e.to_string(),
            }),
            None => Ok(pipeline),
        }
    }

    /// Bind group 0 of `pipeline` with `(binding, buffer)` entries (the bindings the entry
    /// point uses, no more).
    pub fn bind(
        &self,
        pipeline: &wgpu::ComputePipeline,
        entries: &[(u32, &wgpu::Buffer)],
    ) -> wgpu::BindGroup {
        let layout = pipeline.get_bind_group_layout(0);
        let entries: Vec<wgpu::BindGroupEntry> = entries
            .iter()
            .map(|(binding, buf)| wgpu::BindGroupEntry {
                binding: *binding,
                resource: buf.as_entire_binding(),
            })
            .collect();
        self.ctx
            .device
            .create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some(self.kernel),
                layout: &layout,
                entries: &entries,
            })
    }

    fn encode<D: Encode>(
        &self,
        dispatches: &[D],
        ts: Option<&wgpu::QuerySet>,
    ) -> wgpu::CommandEncoder {
        let mut encoder = self
            .ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some(self.kernel),
            });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(self.kernel),
                timestamp_writes: ts.map(|query_set| wgpu::ComputePassTimestampWrites {
                    query_set,
                    beginning_of_pass_write_index: Some(0),
                    end_of_pass_write_index: Some(1),
                }),
            });
            for d in dispatches {
                d.encode(&mut pass);
            }
        }
        encoder
    }

    fn wait(&self) -> Result<(), KernelError> {
        self.ctx
            .device
            .poll(wgpu::PollType::wait_indefinitely())
            .map(|_| ())
            .map_err(|e| self.device_error(format!("waiting for the device failed: {e}")))
    }

    /// Submits the chain once and waits for it (the untimed verification run).
    ///
    /// # Errors
    /// [`KernelError::Device`] when the device reports an error.
    pub fn run_once<D: Encode>(&self, dispatches: &[D]) -> Result<(), KernelError> {
        self.scoped(|| {
            let encoder = self.encode(dispatches, None);
            self.ctx.queue.submit([encoder.finish()]);
            self.wait()
        })
    }

    fn map_read(&self, buf: &wgpu::Buffer) -> Result<Vec<u8>, KernelError> {
        let (tx, rx) = std::sync::mpsc::channel();
        buf.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        self.wait()?;
        let readback = |message: String| KernelError::Readback {
            kernel: self.kernel.to_owned(),
            message,
        };
        rx.recv()
            .map_err(|_| readback("the map callback never ran".to_owned()))?
            .map_err(|e| readback(e.to_string()))?;
        let bytes = buf
            .get_mapped_range(..)
            .map_err(|e| readback(e.to_string()))?
            .to_vec();
        buf.unmap();
        Ok(bytes)
    }

    /// Reads the first `len` bytes of `buf` back to the host (`buf` is at least `len` rounded up
    /// to 4 bytes long, as [`Runner::storage_bytes`] makes it).
    ///
    /// # Errors
    /// [`KernelError::Readback`] / [`KernelError::Device`].
    pub fn read_bytes(&self, buf: &wgpu::Buffer, len: u64) -> Result<Vec<u8>, KernelError> {
        // Copies move whole 4-byte words (COPY_BUFFER_ALIGNMENT).
        let size = len.max(4).next_multiple_of(4);
        let mut bytes = self.scoped(|| {
            let staging = self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("readback"),
                size,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let mut encoder =
                self.ctx
                    .device
                    .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                        label: Some("readback"),
                    });
            encoder.copy_buffer_to_buffer(buf, 0, &staging, 0, size);
            self.ctx.queue.submit([encoder.finish()]);
            self.map_read(&staging)
        })?;
        bytes.truncate(usize::try_from(len).unwrap_or(usize::MAX));
        Ok(bytes)
    }

    /// Reads the first `n` f32 values of `buf` back to the host.
    ///
    /// # Errors
    /// [`KernelError::Readback`] / [`KernelError::Device`].
    pub fn read_f32(&self, buf: &wgpu::Buffer, n: usize) -> Result<Vec<f32>, KernelError> {
        let bytes = self.read_bytes(buf, n as u64 * 4)?;
        Ok(bytes
            .chunks_exact(4)
            .take(n)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }

    /// Times the chain: `runs` (≥ 1) submissions, each one compute pass with every dispatch;
    /// the median, min and max in µs. Uses timestamp queries when the device has
    /// `TIMESTAMP_QUERY`, the host clock otherwise.
    ///
    /// # Errors
    /// [`KernelError::Device`] / [`KernelError::Readback`].
    pub fn time<D: Encode>(&self, dispatches: &[D], runs: u32) -> Result<Timing, KernelError> {
        let runs = runs.max(1);
        let gpu = self
            .ctx
            .device
            .features()
            .contains(wgpu::Features::TIMESTAMP_QUERY);
        let samples = self.scoped(|| {
            let mut samples = Vec::with_capacity(runs as usize);
            if gpu {
                let device = &self.ctx.device;
                let qs = device.create_query_set(&wgpu::QuerySetDescriptor {
                    label: Some("timestamps"),
                    ty: wgpu::QueryType::Timestamp,
                    count: 2,
                });
                let resolve = device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("timestamps resolve"),
                    size: 16,
                    usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: false,
                });
                let staging = device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("timestamps readback"),
                    size: 16,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                let period_ns = f64::from(self.ctx.queue.get_timestamp_period());
                for _ in 0..runs {
                    let mut encoder = self.encode(dispatches, Some(&qs));
                    encoder.resolve_query_set(&qs, 0..2, &resolve, 0);
                    encoder.copy_buffer_to_buffer(&resolve, 0, &staging, 0, 16);
                    self.ctx.queue.submit([encoder.finish()]);
                    let b = self.map_read(&staging)?;
                    let t = |i: usize| {
                        let mut w = [0u8; 8];
                        w.copy_from_slice(&b[i * 8..i * 8 + 8]);
                        u64::from_le_bytes(w)
                    };
                    let ticks = t(1).saturating_sub(t(0));
                    samples.push(ticks as f64 * period_ns / 1e3);
                }
            } else {
                for _ in 0..runs {
                    let encoder = self.encode(dispatches, None);
                    let start = Instant::now();
                    self.ctx.queue.submit([encoder.finish()]);
                    self.wait()?;
                    samples.push(start.elapsed().as_secs_f64() * 1e6);
                }
            }
            Ok(samples)
        })?;
        let mut sorted = samples.clone();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            0.5 * (sorted[n / 2 - 1] + sorted[n / 2])
        };
        Ok(Timing {
            timing: if gpu {
                TimingMethod::GpuTimestamps
            } else {
                TimingMethod::Host
            },
            caveat: (!gpu).then(|| {
                "host wall clock around submit + wait: includes submission and synchronisation \
                 overhead (the adapter has no TIMESTAMP_QUERY)"
                    .to_owned()
            }),
            runs,
            median_us: median,
            min_us: sorted[0],
            max_us: sorted[n - 1],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verification_by_hand() {
        let v = Verification::compare(
            "hand",
            &[1.0, 2.0, 0.0],
            &[1.0, 2.0001, 1e-7],
            Tolerance::F32,
        );
        assert!(v.passed);
        assert!((v.max_abs_error - 1e-4).abs() < 1e-9);
        assert_eq!(v.worst_index, 1);
        // The relative error divides by max(|want|, abs tolerance): 1e-7 / 1e-5 for the third
        // element, larger than 1e-4 / 2.0001 for the second.
        assert!((v.max_rel_error - 1e-2).abs() < 1e-6, "{}", v.max_rel_error);
        let bad = Verification::compare("hand", &[1.0], &[1.1], Tolerance::F32);
        assert!(!bad.passed);
        let nan = Verification::compare("hand", &[f32::NAN], &[1.0], Tolerance::F32);
        assert!(!nan.passed);
        let short = Verification::compare("hand", &[1.0], &[1.0, 2.0], Tolerance::F32);
        assert!(!short.passed);
    }

    #[test]
    fn groups_are_capped() {
        assert_eq!(groups_for(0, 256), 1);
        assert_eq!(groups_for(257, 256), 2);
        assert_eq!(groups_for(u64::MAX / 2, 1), MAX_GROUPS);
    }
}
