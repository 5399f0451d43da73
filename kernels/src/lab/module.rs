//! What a WGSL module binds, learnt from naga's IR: every global resource with its group,
//! binding, address space, access and size, the entry point's workgroup size, and whether
//! the module needs subgroup operations or `f16` — all checked before the GPU is touched.

use serde::Serialize;
use warpscope_core::lab::dispatch::{Binding, Dispatch};
use wgpu::naga;

use super::LabError;
use crate::AdapterReport;

/// How a resource is bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResourceKind {
    /// `var<storage, read>` or `var<storage, read_write>`.
    Storage {
        /// `read_write` (its buffer is read back after the run).
        writable: bool,
    },
    /// `var<uniform>`.
    Uniform,
}

/// One `@group(G) @binding(B)` buffer of the module.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resource {
    /// Where it is bound.
    pub binding: Binding,
    /// The variable's name in the source.
    pub name: String,
    /// Storage (read-only or not) or uniform.
    pub kind: ResourceKind,
    /// Bytes of its type by WGSL's layout rules; for a runtime-sized array, the fixed part and
    /// one element (the least a buffer bound to it may hold).
    pub min_bytes: u64,
    /// Whether the type ends in a runtime-sized array (any larger buffer fits).
    pub runtime_sized: bool,
    /// Whether the entry point reads or writes it (only those are bound on the GPU).
    pub used: bool,
}

/// A validated module's compute entry point and resources.
#[derive(Debug, Clone)]
pub struct Resources {
    /// The entry point's name.
    pub entry: String,
    /// Its `@workgroup_size`.
    pub workgroup_size: [u32; 3],
    /// Every buffer the module declares, in (group, binding) order.
    pub resources: Vec<Resource>,
    /// The module's `override` constants by name.
    pub overrides: Vec<String>,
    module: naga::Module,
}

/// The capabilities that depend on the adapter; every other one is granted when the module
/// is first validated, so that only these can make the second validation fail.
fn adapter_dependent() -> naga::valid::Capabilities {
    use naga::valid::Capabilities as C;
    C::SUBGROUP | C::SUBGROUP_BARRIER | C::SHADER_FLOAT16 | C::SHADER_FLOAT16_IN_FLOAT32
}

fn source_error(what: &str, message: String) -> LabError {
    LabError::Input(format!("the kernel's source {what}:\n{message}"))
}

impl Resources {
    /// Parses and validates `source` and finds the compute entry point `entry` (`None`: the
    /// only one) and the buffers the module declares.
    ///
    /// # Errors
    /// [`LabError::Input`]: a parse or validation error (naga's message with the line, column
    /// and source line); no compute entry point, no such one, or several and none named; a
    /// binding that is not a storage or uniform buffer (textures and samplers are not part of
    /// the lab); a type naga cannot lay out.
    pub fn of(source: &str, entry: Option<&str>) -> Result<Resources, LabError> {
        let module = naga::front::wgsl::parse_str(source)
            .map_err(|e| source_error("does not parse", e.emit_to_string(source)))?;
        let info = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        )
        .validate(&module)
        .map_err(|e| source_error("does not validate", e.emit_to_string(source)))?;
        let computes: Vec<(usize, &naga::EntryPoint)> = module
            .entry_points
            .iter()
            .enumerate()
            .filter(|(_, e)| e.stage == naga::ShaderStage::Compute)
            .collect();
        let names = || {
            computes
                .iter()
                .map(|(_, e)| e.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (index, ep) = match (entry.filter(|e| !e.is_empty()), computes.as_slice()) {
            (_, []) => {
                return Err(LabError::Input(
                    "the kernel has no compute entry point (`@compute fn …`)".to_owned(),
                ));
            }
            (None, [one]) => *one,
            (None, _) => {
                return Err(LabError::Input(format!(
                    "the kernel has several compute entry points ({}); name one with --set entry=NAME",
                    names()
                )));
            }
            (Some(name), _) => *computes
                .iter()
                .find(|(_, e)| e.name == name)
                .ok_or_else(|| {
                    LabError::Input(format!(
                        "no compute entry point `{name}`; the kernel has: {}",
                        names()
                    ))
                })?,
        };
        let mut layouter = naga::proc::Layouter::default();
        layouter
            .update(module.to_ctx())
            .map_err(|e| LabError::Input(format!("naga cannot lay out a type: {e}")))?;
        let ep_info = info.get_entry_point(index);
        let mut resources = Vec::new();
        for (handle, var) in module.global_variables.iter() {
            let Some(rb) = &var.binding else {
                continue;
            };
            let binding = Binding {
                group: rb.group,
                binding: rb.binding,
            };
            let name = var.name.clone().unwrap_or_default();
            let kind = match var.space {
                naga::AddressSpace::Storage { access } => ResourceKind::Storage {
                    writable: access.contains(naga::StorageAccess::STORE),
                },
                naga::AddressSpace::Uniform => ResourceKind::Uniform,
                _ => {
                    return Err(LabError::Input(format!(
                        "binding {binding} (`{name}`) is not a storage or uniform buffer; the lab \
                         binds buffers only (no textures or samplers)"
                    )));
                }
            };
            resources.push(Resource {
                binding,
                name,
                kind,
                min_bytes: u64::from(layouter[var.ty].size),
                runtime_sized: runtime_sized(&module, var.ty),
                used: !ep_info[handle].is_empty(),
            });
        }
        resources.sort_by_key(|r| r.binding);
        let overrides = module
            .overrides
            .iter()
            .filter_map(|(_, o)| o.name.clone())
            .collect();
        Ok(Resources {
            entry: ep.name.clone(),
            workgroup_size: ep.workgroup_size,
            resources,
            overrides,
            module,
        })
    }

    /// Checks that `adapter` has what the module needs: validates the module again granting
    /// subgroup operations and `f16` only where the adapter has them.
    ///
    /// # Errors
    /// [`LabError::Unsupported`] naming the feature and quoting naga's message.
    pub fn check_adapter(&self, source: &str, adapter: &AdapterReport) -> Result<(), LabError> {
        use naga::valid::Capabilities as C;
        let mut caps = C::all() - adapter_dependent();
        let mut lacks = Vec::new();
        if adapter.subgroups {
            caps |= C::SUBGROUP | C::SUBGROUP_BARRIER;
        } else {
            lacks.push("subgroup operations (wgpu::Features::SUBGROUP)");
        }
        if adapter.shader_f16 {
            caps |= C::SHADER_FLOAT16 | C::SHADER_FLOAT16_IN_FLOAT32;
        } else {
            lacks.push("f16 (wgpu::Features::SHADER_F16)");
        }
        match naga::valid::Validator::new(naga::valid::ValidationFlags::all(), caps)
            .validate(&self.module)
        {
            Ok(_) => Ok(()),
            Err(e) => Err(LabError::Unsupported {
                adapter: adapter.name.clone(),
                needs: format!(
                    "the kernel needs a feature the adapter lacks ({}):\n{}",
                    lacks.join(", "),
                    e.emit_to_string(source)
                ),
            }),
        }
    }

    /// Checks `dispatch` against the module: a buffer for every binding the entry point uses,
    /// none for a binding the module does not declare, each at least its type's size, and
    /// overrides the module has.
    ///
    /// # Errors
    /// [`LabError::Input`] naming every missing and unknown binding at once, or the first
    /// buffer too small (its bytes and the type's), or the unknown overrides.
    pub fn check_dispatch(&self, dispatch: &Dispatch) -> Result<(), LabError> {
        let mut problems = Vec::new();
        let missing: Vec<String> = self
            .resources
            .iter()
            .filter(|r| r.used && !dispatch.buffers.contains_key(&r.binding))
            .map(|r| format!("\"{}\" (`{}`)", r.binding, r.name))
            .collect();
        if !missing.is_empty() {
            problems.push(format!(
                "the input has no buffer for {} that the entry point `{}` binds",
                missing.join(", "),
                self.entry
            ));
        }
        let unknown: Vec<String> = dispatch
            .buffers
            .keys()
            .filter(|b| !self.resources.iter().any(|r| r.binding == **b))
            .map(|b| format!("\"{b}\""))
            .collect();
        if !unknown.is_empty() {
            let declared: Vec<String> = self
                .resources
                .iter()
                .map(|r| format!("{} `{}`", r.binding, r.name))
                .collect();
            problems.push(format!(
                "the input gives buffers {} that the kernel does not declare (it declares: {})",
                unknown.join(", "),
                if declared.is_empty() {
                    "none".to_owned()
                } else {
                    declared.join(", ")
                }
            ));
        }
        for r in &self.resources {
            let Some(init) = dispatch.buffers.get(&r.binding) else {
                continue;
            };
            let have = init.byte_len();
            if have < r.min_bytes {
                let what = if r.runtime_sized {
                    "its runtime-sized type needs at least"
                } else {
                    "its type takes"
                };
                problems.push(format!(
                    "buffer \"{}\" (`{}`) holds {} elements of {} = {have} bytes; {what} {} bytes",
                    r.binding,
                    r.name,
                    init.len(),
                    init.ty,
                    r.min_bytes
                ));
            }
        }
        let bad_overrides: Vec<&str> = dispatch
            .overrides
            .keys()
            .filter(|k| !self.overrides.iter().any(|o| o == *k))
            .map(String::as_str)
            .collect();
        if !bad_overrides.is_empty() {
            problems.push(format!(
                "overrides {} are not `override` constants of the kernel (it has: {})",
                bad_overrides.join(", "),
                if self.overrides.is_empty() {
                    "none".to_owned()
                } else {
                    self.overrides.join(", ")
                }
            ));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(LabError::Input(problems.join("; ")))
        }
    }
}

/// Whether `ty` is or ends in a runtime-sized array.
fn runtime_sized(module: &naga::Module, ty: naga::Handle<naga::Type>) -> bool {
    match &module.types[ty].inner {
        naga::TypeInner::Array {
            size: naga::ArraySize::Dynamic,
            ..
        } => true,
        naga::TypeInner::Struct { members, .. } => {
            members.last().is_some_and(|m| runtime_sized(module, m.ty))
        }
        _ => false,
    }
}
