//! The pass itself: helper functions appended as WGSL, then a walk over every function's
//! statements inserting calls to them.

use naga::{
    AddressSpace, Arena, BinaryOperator, Block, BuiltIn, Expression, Function, FunctionArgument,
    GatherMode, Handle, Literal, Module, ScalarKind, Span, Statement, Type, TypeInner,
};

use super::{Instrumented, Op, RECORD_WORDS, Scope, Site, bad};
use crate::Error;
use crate::lab::dispatch::Binding;
use crate::lab::module::{self, LineIndex};
use crate::simt::shuffle::ShuffleMode;

const BEGIN: &str = "_ws_begin";
const RECORD: &str = "_ws_record";
/// Passed for `subgroup_id` and the lane where WGSL forbids those builtins (a multi-dimensional
/// workgroup): `_ws_begin` derives them from `local_invocation_index` instead.
const DERIVE: u32 = u32::MAX;

/// The WGSL appended to the kernel (after its last line, so that its lines keep their numbers).
fn helpers(at: Binding) -> String {
    let mut stores = String::new();
    for (i, w) in [
        "t",
        "_ws_who.x",
        "_ws_who.y",
        "_ws_who.z",
        "_ws_who.w",
        "line",
        "op",
        "site",
        "addr",
        "value",
        "value2",
    ]
    .iter()
    .enumerate()
    {
        stores.push_str(&format!("        atomicStore(&_ws_buf[b + {i}u], {w});\n"));
    }
    format!(
        "\n@group({g}) @binding({b}) var<storage, read_write> _ws_buf: array<atomic<u32>>;\n\
         var<private> _ws_who: vec4<u32>;\n\
         fn {BEGIN}(wid: vec3<u32>, nwg: vec3<u32>, lidx: u32, sgid: u32, lane: u32, sgsize: u32) {{\n\
         \x20   var who = vec4<u32>(wid.x + nwg.x * (wid.y + nwg.y * wid.z), sgid, lane, sgsize);\n\
         \x20   if (sgid == {DERIVE}u) {{ who.y = lidx / sgsize; who.z = lidx % sgsize; }}\n\
         \x20   _ws_who = who;\n\
         }}\n\
         fn {RECORD}(line: u32, op: u32, site: u32, addr: u32, value: u32, value2: u32) {{\n\
         \x20   let t = atomicAdd(&_ws_buf[0], 1u);\n\
         \x20   let cap = (arrayLength(&_ws_buf) - 1u) / {RECORD_WORDS}u;\n\
         \x20   if (t < cap) {{\n\
         \x20       let b = 1u + t * {RECORD_WORDS}u;\n{stores}\
         \x20   }}\n\
         }}\n",
        g = at.group,
        b = at.binding,
    )
}

/// Instruments `source`'s compute entry point `entry` (or its only one): see the module
/// documentation for what is recorded and how. Storage buffers are not recorded
/// ([`instrument_with`] records them too).
///
/// # Errors
/// As [`instrument_with`].
pub fn instrument(source: &str, entry: Option<&str>) -> Result<Instrumented, Error> {
    instrument_with(source, entry, Scope::default())
}

/// [`instrument`], recording what `scope` adds as well.
///
/// # Errors
/// As [`module::load`] for the source itself ([`Error::BadInput`] with the line,
/// [`Error::InvalidParam`] for the entry point); [`Error::BadInput`] when the instrumented
/// module does not validate or cannot be written back as WGSL (a construct naga's WGSL back
/// end does not write), with naga's message.
pub fn instrument_with(
    source: &str,
    entry: Option<&str>,
    scope: Scope,
) -> Result<Instrumented, Error> {
    let program = module::load(source, entry)?;
    let ep = program
        .module
        .entry_points
        .get(program.entry)
        .ok_or_else(|| bad("no entry point".to_owned()))?;
    let entry_name = ep.name.clone();
    let workgroup_size = ep.workgroup_size;
    let at = free_binding(&program.module);
    let text = format!("{source}\n{}", helpers(at));
    let mut m = naga::front::wgsl::parse_str(&text)
        .map_err(|e| bad(format!("instrumenting: {}", e.message())))?;
    let find = |m: &Module, name: &str| {
        m.functions
            .iter()
            .find(|(_, f)| f.name.as_deref() == Some(name))
            .map(|(h, _)| h)
            .ok_or_else(|| bad(format!("instrumenting: {name} missing")))
    };
    let helper_fns = [find(&m, BEGIN)?, find(&m, RECORD)?];
    helpers_first(&mut m, helper_fns)?;
    let (begin, record) = (find(&m, BEGIN)?, find(&m, RECORD)?);
    let mut layouter = naga::proc::Layouter::default();
    layouter
        .update(m.to_ctx())
        .map_err(|e| bad(format!("instrumenting: {e}")))?;
    // Workgroup variables laid out as the simulator lays them out.
    let mut shared_base = vec![None; m.global_variables.len()];
    let mut next = 0u64;
    for (i, (_, g)) in m.global_variables.iter().enumerate() {
        if g.space == AddressSpace::WorkGroup {
            let align = u64::from(layouter[g.ty].alignment.round_up(1)).max(4);
            let base = next.div_ceil(align) * align;
            next = base + u64::from(layouter[g.ty].size);
            if let Some(s) = shared_base.get_mut(i) {
                *s = u32::try_from(base).ok();
            }
        }
    }
    let u32_ty = m.types.insert(
        Type {
            name: None,
            inner: TypeInner::Scalar(naga::Scalar::U32),
        },
        Span::UNDEFINED,
    );
    let vec3_ty = m.types.insert(
        Type {
            name: None,
            inner: TypeInner::Vector {
                size: naga::VectorSize::Tri,
                scalar: naga::Scalar::U32,
            },
        },
        Span::UNDEFINED,
    );
    let mut pass = Pass {
        types: &m.types,
        globals: &m.global_variables,
        shared_base,
        lines: &program.lines,
        record,
        sites: Vec::new(),
        unrecorded: 0,
        global: scope.global,
    };
    let mut functions = std::mem::take(&mut m.functions);
    for (h, f) in functions.iter_mut() {
        if h != begin && h != record {
            pass.function(f);
        }
    }
    let ep_index = m
        .entry_points
        .iter()
        .position(|e| e.name == entry_name)
        .ok_or_else(|| bad("instrumenting: the entry point vanished".to_owned()))?;
    let mut entries = std::mem::take(&mut m.entry_points);
    if let Some(e) = entries.get_mut(ep_index) {
        pass.function(&mut e.function);
        let one_dimensional = workgroup_size[1] == 1 && workgroup_size[2] == 1;
        prologue(
            &mut e.function,
            &m.types,
            begin,
            u32_ty,
            vec3_ty,
            one_dimensional,
        );
    }
    let (sites, unrecorded) = (pass.sites, pass.unrecorded);
    m.functions = functions;
    m.entry_points = entries;
    let caps = naga::valid::Capabilities::SUBGROUP
        | naga::valid::Capabilities::SUBGROUP_BARRIER
        | naga::valid::Capabilities::SHADER_FLOAT16;
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), caps)
        .subgroup_stages(naga::valid::ShaderStages::COMPUTE)
        .subgroup_operations(naga::valid::SubgroupOperationSet::all())
        .validate(&m)
        .map_err(|e| {
            let mut message = e.as_inner().to_string();
            let mut src: &dyn std::error::Error = e.as_inner();
            while let Some(s) = src.source() {
                message.push_str(": ");
                message.push_str(&s.to_string());
                src = s;
            }
            bad(format!(
                "the instrumented module does not validate: {message}"
            ))
        })?;
    let source = naga::back::wgsl::write_string(&m, &info, naga::back::wgsl::WriterFlags::empty())
        .map_err(|e| bad(format!("writing the instrumented module: {e}")))?;
    Ok(Instrumented {
        source,
        entry: entry_name,
        workgroup_size,
        binding: at,
        sites,
        unrecorded,
    })
}

/// Moves the helpers to the front of the function arena (naga wants a callee before its
/// callers) and renumbers every call.
fn helpers_first(m: &mut Module, helpers: [Handle<Function>; 2]) -> Result<(), Error> {
    let old = std::mem::take(&mut m.functions);
    let mut map: Vec<Option<Handle<Function>>> = vec![None; old.len()];
    let mut new = Arena::new();
    let order = helpers
        .iter()
        .copied()
        .chain(old.iter().map(|(h, _)| h).filter(|h| !helpers.contains(h)));
    for h in order {
        let f = old
            .try_get(h)
            .map_err(|e| bad(format!("instrumenting: {e}")))?
            .clone();
        if let Some(slot) = map.get_mut(h.index()) {
            *slot = Some(new.append(f, old.get_span(h)));
        }
    }
    let remap = |f: &mut Function| {
        for (_, e) in f.expressions.iter_mut() {
            if let Expression::CallResult(h) = e
                && let Some(Some(n)) = map.get(h.index())
            {
                *h = *n;
            }
        }
        remap_calls(&mut f.body, &map);
    };
    for (_, f) in new.iter_mut() {
        remap(f);
    }
    for ep in &mut m.entry_points {
        remap(&mut ep.function);
    }
    m.functions = new;
    Ok(())
}

fn remap_calls(b: &mut Block, map: &[Option<Handle<Function>>]) {
    for (s, _) in b.span_iter_mut() {
        match s {
            Statement::Call { function, .. } => {
                if let Some(Some(n)) = map.get(function.index()) {
                    *function = *n;
                }
            }
            Statement::Block(inner) => remap_calls(inner, map),
            Statement::If { accept, reject, .. } => {
                remap_calls(accept, map);
                remap_calls(reject, map);
            }
            Statement::Switch { cases, .. } => {
                for c in cases {
                    remap_calls(&mut c.body, map);
                }
            }
            Statement::Loop {
                body, continuing, ..
            } => {
                remap_calls(body, map);
                remap_calls(continuing, map);
            }
            _ => {}
        }
    }
}

/// A binding the module leaves free: the next binding of its highest group (0:0 for none).
fn free_binding(m: &Module) -> Binding {
    let used: Vec<(u32, u32)> = m
        .global_variables
        .iter()
        .filter_map(|(_, g)| g.binding.as_ref().map(|b| (b.group, b.binding)))
        .collect();
    let group = used.iter().map(|u| u.0).max().unwrap_or(0);
    let binding = used
        .iter()
        .filter(|u| u.0 == group)
        .map(|u| u.1 + 1)
        .max()
        .unwrap_or(0);
    Binding { group, binding }
}

/// Calls `_ws_begin` first thing in the entry point with the builtins it needs, reusing the
/// entry point's own arguments (or struct members) where it declares them already.
fn prologue(
    f: &mut Function,
    types: &naga::UniqueArena<Type>,
    begin: Handle<Function>,
    u32_ty: Handle<Type>,
    vec3_ty: Handle<Type>,
    one_dimensional: bool,
) {
    let mut wanted = vec![
        (BuiltIn::WorkGroupId, vec3_ty),
        (BuiltIn::NumWorkGroups, vec3_ty),
        (BuiltIn::LocalInvocationIndex, u32_ty),
    ];
    if one_dimensional {
        wanted.push((BuiltIn::SubgroupId, u32_ty));
        wanted.push((BuiltIn::SubgroupInvocationId, u32_ty));
    }
    wanted.push((BuiltIn::SubgroupSize, u32_ty));
    let mut places = Vec::new();
    for (b, ty) in wanted {
        let want = Some(naga::Binding::BuiltIn(b));
        let mut found = None;
        for (i, a) in f.arguments.iter().enumerate() {
            if a.binding == want {
                found = Some((i, None));
            } else if let Some(t) = types.get_handle(a.ty).ok()
                && let TypeInner::Struct { members, .. } = &t.inner
                && let Some(mi) = members.iter().position(|mm| mm.binding == want)
            {
                found = Some((i, Some(mi as u32)));
            }
            if found.is_some() {
                break;
            }
        }
        let place = found.unwrap_or_else(|| {
            f.arguments.push(FunctionArgument {
                name: Some(format!("_ws_{b:?}").to_lowercase()),
                ty,
                binding: want,
            });
            (f.arguments.len() - 1, None)
        });
        places.push(place);
    }
    let args: Vec<Handle<Expression>> = places
        .iter()
        .map(|&(i, _)| {
            f.expressions
                .append(Expression::FunctionArgument(i as u32), Span::UNDEFINED)
        })
        .collect();
    let derive = f
        .expressions
        .append(Expression::Literal(Literal::U32(DERIVE)), Span::UNDEFINED);
    let start = f.expressions.len();
    let mut arguments: Vec<Handle<Expression>> = places
        .iter()
        .zip(&args)
        .map(|(&(_, member), &a)| match member {
            Some(index) => f
                .expressions
                .append(Expression::AccessIndex { base: a, index }, Span::UNDEFINED),
            None => a,
        })
        .collect();
    if !one_dimensional {
        // wid, nwg, lidx, then the two derived, then the size.
        arguments.splice(3..3, [derive, derive]);
    }
    let mut head = Block::new();
    if f.expressions.len() > start {
        head.push(
            Statement::Emit(f.expressions.range_from(start)),
            Span::UNDEFINED,
        );
    }
    head.push(
        Statement::Call {
            function: begin,
            arguments,
            result: None,
        },
        Span::UNDEFINED,
    );
    let body = std::mem::take(&mut f.body);
    head.extend_block(body);
    f.body = head;
}

/// A workgroup address (or, with `binding`, a byte offset in that storage buffer): a constant
/// plus `index × stride` terms.
struct Addr {
    binding: Option<Binding>,
    constant: u32,
    terms: Vec<(Handle<Expression>, u32)>,
    /// The pointee.
    inner: TypeInner,
}

struct Pass<'a> {
    types: &'a naga::UniqueArena<Type>,
    globals: &'a Arena<naga::GlobalVariable>,
    shared_base: Vec<Option<u32>>,
    lines: &'a LineIndex,
    record: Handle<Function>,
    sites: Vec<Site>,
    unrecorded: u32,
    /// Whether storage-buffer loads and stores are recorded too.
    global: bool,
}

/// What to append after one statement.
struct Rec {
    op: Op,
    line: u32,
    addr: Option<Addr>,
    lane_arg: Option<Handle<Expression>>,
    value: Option<Handle<Expression>>,
    /// Components of `value` recorded: 1 (a 32-bit scalar), 2 (a 2-vector of 32-bit
    /// components), 0 (none).
    components: u32,
    width: u32,
    gather: Option<ShuffleMode>,
}

impl Rec {
    /// A record with no address, value or gather.
    fn bare(op: Op, line: u32) -> Rec {
        Rec {
            op,
            line,
            addr: None,
            lane_arg: None,
            value: None,
            components: 0,
            width: 0,
            gather: None,
        }
    }
}

/// Bytes of a 32-bit-or-narrower scalar or vector pointee and how many of its components the
/// record's two value words hold (32-bit ones: a scalar or a 2-vector; otherwise none).
fn width_of(inner: &TypeInner) -> Option<(u32, u32)> {
    let word = |s: &naga::Scalar| s.width == 4 && s.kind != ScalarKind::Bool;
    match inner {
        TypeInner::Scalar(s) | TypeInner::Atomic(s) => {
            Some((u32::from(s.width), u32::from(word(s))))
        }
        TypeInner::Vector { size, scalar } => {
            let w = *size as u32 * u32::from(scalar.width);
            let two = *size == naga::VectorSize::Bi && word(scalar);
            matches!(w, 1 | 2 | 4 | 8 | 16).then_some((w, if two { 2 } else { 0 }))
        }
        _ => None,
    }
}

impl Pass<'_> {
    fn function(&mut self, f: &mut Function) {
        let body = std::mem::take(&mut f.body);
        f.body = self.block(&mut f.expressions, body);
    }

    fn block(&mut self, ex: &mut Arena<Expression>, b: Block) -> Block {
        let mut out = Block::with_capacity(b.len());
        for (stmt, span) in b.span_into_iter() {
            let line = self.lines.line(span);
            let mut recs = Vec::new();
            let stmt = match stmt {
                Statement::Block(inner) => Statement::Block(self.block(ex, inner)),
                Statement::If {
                    condition,
                    accept,
                    reject,
                } => Statement::If {
                    condition,
                    accept: self.block(ex, accept),
                    reject: self.block(ex, reject),
                },
                Statement::Switch { selector, cases } => Statement::Switch {
                    selector,
                    cases: cases
                        .into_iter()
                        .map(|c| naga::SwitchCase {
                            body: self.block(ex, c.body),
                            ..c
                        })
                        .collect(),
                },
                Statement::Loop {
                    body,
                    continuing,
                    break_if,
                } => Statement::Loop {
                    body: self.block(ex, body),
                    continuing: self.block(ex, continuing),
                    break_if,
                },
                s => {
                    self.records_of(ex, &s, line, &mut recs);
                    s
                }
            };
            out.push(stmt, span);
            for r in recs {
                self.append(ex, &mut out, span, r);
            }
        }
        out
    }

    fn records_of(
        &mut self,
        ex: &Arena<Expression>,
        s: &Statement,
        line: u32,
        recs: &mut Vec<Rec>,
    ) {
        let mut access = |this: &mut Self, op, line, pointer, value: Option<Handle<Expression>>| {
            // Atomics on storage buffers are always recorded: the simulator counts them among
            // a line's atomics, as it counts workgroup ones.
            let storage = this.global || op == Op::SharedAtomic;
            let Some(addr) = this.addr(ex, pointer, storage) else {
                if this.is_shared(ex, pointer) {
                    this.unrecorded += 1;
                }
                return;
            };
            let op = match (op, addr.binding.is_some()) {
                (op, false) => op,
                (Op::SharedLoad, true) => Op::GlobalLoad,
                (Op::SharedStore, true) => Op::GlobalStore,
                (_, true) => Op::GlobalAtomic,
            };
            let Some((width, components)) = width_of(&addr.inner) else {
                if addr.binding.is_none() {
                    this.unrecorded += 1;
                }
                return;
            };
            recs.push(Rec {
                addr: Some(addr),
                value,
                components,
                width,
                ..Rec::bare(op, line)
            });
        };
        match *s {
            Statement::Emit(ref range) => {
                for h in range.clone() {
                    if let Ok(&Expression::Load { pointer }) = ex.try_get(h) {
                        let l = self.lines.line(ex.get_span(h));
                        access(self, Op::SharedLoad, l, pointer, Some(h));
                    }
                }
            }
            Statement::Store { pointer, value } => {
                access(self, Op::SharedStore, line, pointer, Some(value));
            }
            Statement::Atomic { pointer, value, .. } => {
                access(self, Op::SharedAtomic, line, pointer, Some(value));
            }
            Statement::WorkGroupUniformLoad { pointer, .. } if self.is_shared(ex, pointer) => {
                self.unrecorded += 1;
            }
            Statement::ControlBarrier(_) => recs.push(Rec::bare(Op::Barrier, line)),
            Statement::SubgroupCollectiveOperation { result, .. } => {
                recs.push(self.subgroup(ex, Op::SubgroupCollective, line, None, result));
            }
            Statement::SubgroupBallot { .. } => {
                recs.push(Rec::bare(Op::SubgroupCollective, line));
            }
            Statement::SubgroupGather { mode, result, .. } => {
                let (arg, gather) = match mode {
                    GatherMode::Broadcast(a) | GatherMode::Shuffle(a) => {
                        (Some(a), Some(ShuffleMode::Idx))
                    }
                    GatherMode::ShuffleDown(a) => (Some(a), Some(ShuffleMode::Down)),
                    GatherMode::ShuffleUp(a) => (Some(a), Some(ShuffleMode::Up)),
                    GatherMode::ShuffleXor(a) => (Some(a), Some(ShuffleMode::Xor)),
                    GatherMode::QuadBroadcast(a) => (Some(a), None),
                    GatherMode::BroadcastFirst | GatherMode::QuadSwap(_) => (None, None),
                };
                let mut r = self.subgroup(ex, Op::SubgroupGather, line, arg, result);
                r.gather = gather;
                recs.push(r);
            }
            _ => {}
        }
    }

    fn subgroup(
        &self,
        ex: &Arena<Expression>,
        op: Op,
        line: u32,
        lane_arg: Option<Handle<Expression>>,
        result: Handle<Expression>,
    ) -> Rec {
        let components = match ex.try_get(result) {
            Ok(Expression::SubgroupOperationResult { ty }) => self
                .types
                .get_handle(*ty)
                .ok()
                .and_then(|t| width_of(&t.inner))
                .map_or(0, |(_, c)| c),
            _ => 0,
        };
        Rec {
            lane_arg,
            value: Some(result),
            components,
            ..Rec::bare(op, line)
        }
    }

    fn is_shared(&self, ex: &Arena<Expression>, mut p: Handle<Expression>) -> bool {
        loop {
            match ex.try_get(p) {
                Ok(Expression::Access { base, .. } | Expression::AccessIndex { base, .. }) => {
                    p = *base
                }
                Ok(Expression::GlobalVariable(g)) => {
                    return self
                        .globals
                        .try_get(*g)
                        .is_ok_and(|g| g.space == AddressSpace::WorkGroup);
                }
                _ => return false,
            }
        }
    }

    /// The byte address `p` points at when it is a chain of indices into a workgroup variable
    /// (or, when storage buffers are recorded, the byte offset into a storage buffer).
    fn addr(&self, ex: &Arena<Expression>, p: Handle<Expression>, storage: bool) -> Option<Addr> {
        match ex.try_get(p).ok()? {
            Expression::GlobalVariable(g) => {
                let var = self.globals.try_get(*g).ok()?;
                let (binding, constant) = match var.space {
                    AddressSpace::WorkGroup => (None, (*self.shared_base.get(g.index())?)?),
                    AddressSpace::Storage { .. } if storage => {
                        let b = var.binding.as_ref()?;
                        let at = Binding {
                            group: b.group,
                            binding: b.binding,
                        };
                        (Some(at), 0)
                    }
                    _ => return None,
                };
                Some(Addr {
                    binding,
                    constant,
                    terms: Vec::new(),
                    inner: self.types.get_handle(var.ty).ok()?.inner.clone(),
                })
            }
            Expression::Access { base, index } => {
                let mut a = self.addr(ex, *base, storage)?;
                let (inner, stride) = self.element(&a.inner, None)?;
                a.terms.push((*index, stride));
                a.inner = inner;
                Some(a)
            }
            Expression::AccessIndex { base, index } => {
                let mut a = self.addr(ex, *base, storage)?;
                let (inner, off) = self.element(&a.inner, Some(*index))?;
                a.constant = a.constant.checked_add(off)?;
                a.inner = inner;
                Some(a)
            }
            _ => None,
        }
    }

    /// The element type of an array or vector and its stride (`index: None`), or member /
    /// element `index` and its byte offset.
    fn element(&self, inner: &TypeInner, index: Option<u32>) -> Option<(TypeInner, u32)> {
        let k = index.unwrap_or(1);
        match inner {
            TypeInner::Array { base, stride, .. } => Some((
                self.types.get_handle(*base).ok()?.inner.clone(),
                stride.checked_mul(k)?,
            )),
            TypeInner::Vector { scalar, .. } => Some((
                TypeInner::Scalar(*scalar),
                u32::from(scalar.width).checked_mul(k)?,
            )),
            TypeInner::Struct { members, .. } if index.is_some() => {
                let m = members.get(k as usize)?;
                Some((self.types.get_handle(m.ty).ok()?.inner.clone(), m.offset))
            }
            _ => None,
        }
    }

    /// Appends the call recording `r` after the statement just pushed.
    fn append(&mut self, ex: &mut Arena<Expression>, out: &mut Block, span: Span, r: Rec) {
        let site = self.sites.len() as u32;
        self.sites.push(Site {
            line: r.line,
            op: r.op,
            width: r.width,
            binding: r.addr.as_ref().and_then(|a| a.binding),
            gather: r.gather,
        });
        let lit = |ex: &mut Arena<Expression>, v: u32| {
            ex.append(Expression::Literal(Literal::U32(v)), span)
        };
        let line = lit(ex, r.line);
        let op = lit(ex, r.op as u32 | r.width << 8);
        let site_h = lit(ex, site);
        let zero = lit(ex, 0);
        let constant = lit(ex, r.addr.as_ref().map_or(0, |a| a.constant));
        let strides: Vec<Handle<Expression>> = r
            .addr
            .as_ref()
            .map(|a| a.terms.iter().map(|t| lit(ex, t.1)).collect())
            .unwrap_or_default();
        let start = ex.len();
        let to_u32 = |ex: &mut Arena<Expression>, e, convert| {
            ex.append(
                Expression::As {
                    expr: e,
                    kind: ScalarKind::Uint,
                    convert,
                },
                span,
            )
        };
        let mut addr = if r.addr.is_some() { constant } else { zero };
        if let Some(a) = &r.addr {
            for (&(index, _), &stride) in a.terms.iter().zip(&strides) {
                let i = to_u32(ex, index, Some(4));
                let term = ex.append(
                    Expression::Binary {
                        op: BinaryOperator::Multiply,
                        left: i,
                        right: stride,
                    },
                    span,
                );
                addr = ex.append(
                    Expression::Binary {
                        op: BinaryOperator::Add,
                        left: addr,
                        right: term,
                    },
                    span,
                );
            }
        }
        if let Some(l) = r.lane_arg {
            addr = to_u32(ex, l, Some(4));
        }
        let (value, value2) = match (r.value, r.components) {
            (Some(v), 1) => (to_u32(ex, v, None), zero),
            (Some(v), 2) => {
                let mut part = |index| {
                    let c = ex.append(Expression::AccessIndex { base: v, index }, span);
                    to_u32(ex, c, None)
                };
                (part(0), part(1))
            }
            _ => (zero, zero),
        };
        if ex.len() > start {
            out.push(Statement::Emit(ex.range_from(start)), span);
        }
        out.push(
            Statement::Call {
                function: self.record,
                arguments: vec![line, op, site_h, addr, value, value2],
                result: None,
            },
            span,
        );
    }
}
