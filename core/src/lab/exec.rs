//! Statements and control flow: the workgroup as a SIMT machine over naga's structured IR.
//!
//! All warps of a workgroup walk the statement tree together, each with its own active mask
//! (a warp whose mask is empty issues nothing): an `if` splits every warp's mask by the
//! condition and runs both sides masked (a warp with lanes on both sides counts a divergent
//! branch); a loop runs while any lane is still in it; `break`, `continue` and `return` move
//! lanes out of the mask into the enclosing construct's exit set. A barrier is a statement all
//! warps reach together, so the run is the deterministic schedule "warp 0 until it blocks,
//! then warp 1, …" up to the order of memory effects between two barriers, which only a racy
//! kernel can observe (and the race sanitizer reports). Trace events are numbered in that
//! schedule's order: by barrier interval, then warp.

use std::rc::Rc;

use naga::{Block, Expression, Function, Handle, Statement};

use super::Machine;
use super::output::WarningKind;
use super::value::{Active, Val, lanes_of};
use crate::Error;
use crate::simt::EventKind;
use crate::text::Text;

/// A loop or switch being executed: the lanes that left it by `break` or `continue`.
#[derive(Debug)]
pub struct Ctl {
    /// A loop (`continue` lands here) rather than a switch.
    pub is_loop: bool,
    /// Lanes that executed `break`.
    pub brk: Active,
    /// Lanes that executed `continue`.
    pub cont: Active,
}

/// One function invocation (per workgroup, all lanes together).
#[derive(Debug)]
pub struct Frame<'m> {
    /// The function.
    pub fun: &'m Function,
    /// The validator's types of its expressions.
    pub finfo: &'m naga::valid::FunctionInfo,
    /// Evaluated expressions, by handle index.
    pub cache: Vec<Option<Rc<Val>>>,
    /// Argument values.
    pub args: Vec<Rc<Val>>,
    /// Memory region of each local variable.
    pub locals: Vec<usize>,
    /// The returned value, lane by lane.
    pub ret: Option<Val>,
    /// Enclosing loops and switches, innermost last.
    pub ctl: Vec<Ctl>,
}

impl<'m> Frame<'m> {
    /// A fresh frame of `fun`.
    pub fn new(
        fun: &'m Function,
        finfo: &'m naga::valid::FunctionInfo,
        args: Vec<Rc<Val>>,
    ) -> Self {
        Frame {
            fun,
            finfo,
            cache: vec![None; fun.expressions.len()],
            args,
            locals: Vec::new(),
            ret: None,
            ctl: Vec::new(),
        }
    }
}

/// Loop iterations between two progress reports (each a thread-local read).
const REPORT_EVERY: u64 = 4096;

impl<'m> Machine<'m> {
    /// Runs `block` for the lanes of `mask`; the lanes that fall off its end.
    pub fn exec_block(
        &mut self,
        f: &mut Frame<'m>,
        block: &'m Block,
        mut mask: Active,
    ) -> Result<Active, Error> {
        for (stmt, span) in block.span_iter() {
            if mask.is_empty() {
                break;
            }
            let line = self.lines.line(*span);
            mask = self.exec(f, stmt, line, mask)?;
        }
        Ok(mask)
    }

    fn exec(
        &mut self,
        f: &mut Frame<'m>,
        stmt: &'m Statement,
        line: u32,
        mask: Active,
    ) -> Result<Active, Error> {
        match stmt {
            Statement::Emit(range) => {
                for h in range.clone() {
                    self.eval_emitted(f, h, &mask)?;
                }
                Ok(mask)
            }
            Statement::Block(b) => self.exec_block(f, b, mask),
            Statement::If {
                condition,
                accept,
                reject,
            } => {
                self.count(line, &mask, EventKind::Compute)?;
                let cond = self.operand(f, *condition, &mask)?;
                let (t, e) = self.split(&cond, &mask, line);
                let mut out = self.exec_block(f, accept, t)?;
                let o2 = self.exec_block(f, reject, e)?;
                out.or_with(&o2);
                Ok(out)
            }
            Statement::Switch { selector, cases } => {
                self.count(line, &mask, EventKind::Compute)?;
                let sel = self.operand(f, *selector, &mask)?;
                self.switch(f, &sel, cases, line, mask)
            }
            Statement::Loop {
                body,
                continuing,
                break_if,
            } => self.run_loop(f, body, continuing, *break_if, mask),
            Statement::Break => {
                if let Some(c) = f.ctl.last_mut() {
                    c.brk.or_with(&mask);
                }
                Ok(Active::none(self.nw))
            }
            Statement::Continue => {
                if let Some(c) = f.ctl.iter_mut().rev().find(|c| c.is_loop) {
                    c.cont.or_with(&mask);
                }
                Ok(Active::none(self.nw))
            }
            Statement::Return { value } => {
                if let Some(v) = value {
                    let val = self.operand(f, *v, &mask)?;
                    let n = self.n;
                    let ret = f.ret.get_or_insert_with(|| Val::zeros(val.words, n));
                    for r in self.ranges(&mask) {
                        for l in r {
                            if mask.has(self.sg, l) {
                                for c in 0..val.words {
                                    ret.set(n, c, l, val.get(n, c, l));
                                }
                            }
                        }
                    }
                }
                Ok(Active::none(self.nw))
            }
            Statement::Kill => Err(self.refuse(line, "`discard` (fragment shaders only)")),
            Statement::ControlBarrier(b) => {
                if b.intersects(naga::Barrier::WORK_GROUP | naga::Barrier::STORAGE) {
                    self.barrier(line, &mask)?;
                } else {
                    self.count(line, &mask, EventKind::Compute)?;
                }
                Ok(mask)
            }
            Statement::MemoryBarrier(_) => {
                self.count(line, &mask, EventKind::Compute)?;
                Ok(mask)
            }
            Statement::Store { pointer, value } => {
                self.count(line, &mask, EventKind::Compute)?;
                let leaves = self.pointee_leaves(f, *pointer)?;
                let ptr = self.operand(f, *pointer, &mask)?;
                let val = self.operand(f, *value, &mask)?;
                self.access(&ptr, &leaves, &mask, line, Some(&val))?;
                Ok(mask)
            }
            Statement::Atomic {
                pointer,
                fun,
                value,
                result,
            } => {
                self.count(line, &mask, EventKind::Compute)?;
                let r = self.atomic(f, *pointer, fun, *value, &mask, line)?;
                if let Some(h) = result {
                    set(f, *h, r);
                }
                Ok(mask)
            }
            Statement::WorkGroupUniformLoad { pointer, result } => {
                self.barrier(line, &mask)?;
                self.count(line, &mask, EventKind::Compute)?;
                let leaves = self.pointee_leaves(f, *pointer)?;
                let ptr = self.operand(f, *pointer, &mask)?;
                let v = self.access(&ptr, &leaves, &mask, line, None)?;
                self.barrier(line, &mask)?;
                // Every invocation sees the same value (WGSL §17.11): the first active lane's.
                let v = self.uniform_of(v, &mask);
                set(f, *result, v);
                Ok(mask)
            }
            Statement::Call {
                function,
                arguments,
                result,
            } => {
                self.count(line, &mask, EventKind::Compute)?;
                let mut args = Vec::with_capacity(arguments.len());
                for a in arguments {
                    args.push(self.operand(f, *a, &mask)?);
                }
                let ret = self.call(*function, args, &mask)?;
                if let (Some(h), Some(v)) = (result, ret) {
                    set(f, *h, v);
                }
                Ok(mask)
            }
            Statement::SubgroupBallot { result, predicate } => {
                let p = match predicate {
                    Some(p) => Some(self.operand(f, *p, &mask)?),
                    None => None,
                };
                let v = self.ballot(p.as_deref(), &mask, line)?;
                set(f, *result, v);
                Ok(mask)
            }
            Statement::SubgroupGather {
                mode,
                argument,
                result,
            } => {
                let v = self.gather(f, mode, *argument, &mask, line)?;
                set(f, *result, v);
                Ok(mask)
            }
            Statement::SubgroupCollectiveOperation {
                op,
                collective_op,
                argument,
                result,
            } => {
                let v = self.collective(f, *op, *collective_op, *argument, &mask, line)?;
                set(f, *result, v);
                Ok(mask)
            }
            _ => Err(self.refuse(line, "images, ray queries and cooperative matrices")),
        }
    }

    /// An error naming what the lab does not simulate, with the line.
    pub fn refuse(&self, line: u32, what: &str) -> Error {
        Error::BadInput(format!(
            "line {line}: the kernel lab does not simulate {what}\n第 {line} 行：内核实验室不模拟 {what}"
        ))
    }

    /// Splits `mask` by a bool `cond`; counts the divergent warps on `line`.
    fn split(&mut self, cond: &Val, mask: &Active, line: u32) -> (Active, Active) {
        let (mut t, mut e) = (Active::none(self.nw), Active::none(self.nw));
        let mut divergent = 0;
        for (w, m) in mask.warps() {
            let mut bits = 0u64;
            for l in lanes_of(m) {
                if cond.get(self.n, 0, w * self.sg + l) != 0 {
                    bits |= 1 << l;
                }
            }
            if let (Some(tw), Some(ew)) = (t.0.get_mut(w), e.0.get_mut(w)) {
                *tw = m & bits;
                *ew = m & !bits;
                if *tw != 0 && *ew != 0 {
                    divergent += 1;
                }
            }
        }
        self.stats.at(line).divergent_branches += divergent;
        (t, e)
    }

    fn switch(
        &mut self,
        f: &mut Frame<'m>,
        sel: &Val,
        cases: &'m [naga::SwitchCase],
        line: u32,
        mask: Active,
    ) -> Result<Active, Error> {
        // Which case each lane takes: its value's case, else `default`.
        let mut which: Vec<Active> = cases.iter().map(|_| Active::none(self.nw)).collect();
        let default = cases
            .iter()
            .position(|c| c.value == naga::SwitchValue::Default);
        let mut divergent = 0;
        for (w, m) in mask.warps() {
            let mut taken = 0u32;
            let mut seen = vec![false; cases.len()];
            for l in lanes_of(m) {
                let v = sel.get(self.n, 0, w * self.sg + l);
                let i = cases
                    .iter()
                    .position(|c| match c.value {
                        naga::SwitchValue::I32(x) => x as u32 == v,
                        naga::SwitchValue::U32(x) => x == v,
                        naga::SwitchValue::Default => false,
                    })
                    .or(default);
                if let Some(i) = i
                    && let (Some(a), Some(s)) = (which.get_mut(i), seen.get_mut(i))
                {
                    if let Some(x) = a.0.get_mut(w) {
                        *x |= 1 << l;
                    }
                    if !*s {
                        *s = true;
                        taken += 1;
                    }
                }
            }
            if taken > 1 {
                divergent += 1;
            }
        }
        self.stats.at(line).divergent_branches += divergent;
        f.ctl.push(Ctl {
            is_loop: false,
            brk: Active::none(self.nw),
            cont: Active::none(self.nw),
        });
        let mut out = Active::none(self.nw);
        let mut running = Active::none(self.nw);
        let mut result = Ok(());
        for (case, lanes) in cases.iter().zip(&which) {
            running.or_with(lanes);
            match self.exec_block(f, &case.body, running.clone()) {
                Ok(after) if case.fall_through => running = after,
                Ok(after) => {
                    out.or_with(&after);
                    running = Active::none(self.nw);
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        let ctl = f.ctl.pop();
        result?;
        if let Some(c) = ctl {
            out.or_with(&c.brk);
        }
        Ok(out)
    }

    fn run_loop(
        &mut self,
        f: &mut Frame<'m>,
        body: &'m Block,
        continuing: &'m Block,
        break_if: Option<Handle<Expression>>,
        mask: Active,
    ) -> Result<Active, Error> {
        let mut live = mask;
        let mut exited = Active::none(self.nw);
        while !live.is_empty() {
            self.iterations += 1;
            if self.iterations.is_multiple_of(REPORT_EVERY) {
                crate::progress::report(self.done_workgroups, self.total_workgroups)?;
            }
            f.ctl.push(Ctl {
                is_loop: true,
                brk: Active::none(self.nw),
                cont: Active::none(self.nw),
            });
            let after = self.exec_block(f, body, live.clone());
            let ctl = f.ctl.pop();
            let mut next = after?;
            if let Some(c) = ctl {
                next.or_with(&c.cont);
                exited.or_with(&c.brk);
            }
            let next = self.exec_block(f, continuing, next)?;
            live = match break_if {
                Some(h) if !next.is_empty() => {
                    let cond = self.operand(f, h, &next)?;
                    let line = self.lines.line(f.fun.expressions.get_span(h));
                    let (stop, go) = self.split(&cond, &next, line);
                    exited.or_with(&stop);
                    go
                }
                _ => next,
            };
        }
        Ok(exited)
    }

    /// `workgroupBarrier()` / `storageBarrier()`: every warp with active lanes waits here;
    /// the barrier completes for the workgroup. Lanes of the workgroup that do not reach it
    /// (another branch, returned) make it a divergent barrier.
    pub fn barrier(&mut self, line: u32, mask: &Active) -> Result<(), Error> {
        if *mask != self.full {
            let (got, all) = (mask.count(), self.full.count());
            self.stats.warn(WarningKind::BarrierDivergence, line, || {
                Text::new(
                    format!(
                        "a barrier reached by {got} of the workgroup's {all} invocations: WGSL requires every invocation to reach it (uniform control flow); on a GPU this may hang or be undefined"
                    ),
                    format!(
                        "屏障只被工作组 {all} 个调用中的 {got} 个到达：WGSL 要求所有调用都到达（一致控制流）；在 GPU 上可能挂起或行为未定义"
                    ),
                )
            });
        }
        self.barrier_index += 1;
        self.stats.barriers += 1;
        let index = self.barrier_index;
        self.count(line, mask, EventKind::Barrier { index })?;
        Ok(())
    }

    /// Calls `function` with `args` for the lanes of `mask`; its returned value.
    pub fn call(
        &mut self,
        function: Handle<Function>,
        args: Vec<Rc<Val>>,
        mask: &Active,
    ) -> Result<Option<Val>, Error> {
        let module = self.module;
        let fun = &module.functions[function];
        let finfo = &self.info[function];
        let mut frame = Frame::new(fun, finfo, args);
        let mark = self.mem.regions.len();
        self.depth += 1;
        if self.depth > 64 {
            return Err(Error::BadInput(
                "calls nested past 64 deep (WGSL forbids recursion)".to_owned(),
            ));
        }
        let r = self.enter(&mut frame, mask);
        self.depth -= 1;
        self.mem.regions.truncate(mark);
        r?;
        Ok(frame.ret)
    }

    /// Allocates the frame's local variables and runs its body.
    pub fn enter(&mut self, f: &mut Frame<'m>, mask: &Active) -> Result<(), Error> {
        let fun = f.fun;
        for (h, local) in fun.local_variables.iter() {
            let size = self.layouter[local.ty].size as usize;
            let region = self
                .mem
                .lane_region(self.n, size, &mut self.mem_used, self.max_memory)?;
            f.locals.push(region);
            if let Some(init) = local.init {
                let v = self.operand(f, init, mask)?;
                let leaves = self.leaves_of(local.ty)?;
                let ptr = self.local_ptr(f, h);
                self.access(&ptr, &leaves, mask, 0, Some(&v))?;
            }
        }
        self.exec_block(f, &fun.body, mask.clone())?;
        Ok(())
    }

    /// The value of the first active lane everywhere.
    fn uniform_of(&self, mut v: Val, mask: &Active) -> Val {
        let Some(first) = (0..self.n).find(|&l| mask.has(self.sg, l)) else {
            return v;
        };
        for c in 0..v.words {
            let w = v.get(self.n, c, first);
            if let Some(s) = v.data.get_mut(c * self.n..(c + 1) * self.n) {
                s.fill(w);
            }
        }
        v
    }

    /// The lane ranges of the warps with an active lane.
    pub fn ranges<'a>(
        &self,
        mask: &'a Active,
    ) -> impl Iterator<Item = std::ops::Range<usize>> + 'a {
        let sg = self.sg;
        mask.warps().map(move |(w, _)| w * sg..(w + 1) * sg)
    }
}

/// Caches a statement's result expression.
fn set(f: &mut Frame<'_>, h: Handle<Expression>, v: Val) {
    if let Some(slot) = f.cache.get_mut(h.index()) {
        *slot = Some(Rc::new(v));
    }
}
