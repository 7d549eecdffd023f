//! Batched drivers of a [`Search`]: several leaves of the tree per network call, kept
//! apart by virtual loss (as the engine does), from one thread or several.
//!
//! [`Search::select`] may be called again while leaves are pending (each selected leaf
//! charges a virtual loss along its path), and [`Search::apply`] takes the evaluations
//! back in the order the leaves were selected. [`Search::run_batched`] uses that: each
//! worker collects up to `batch` leaves, evaluates them in one call of its
//! [`LeafEvaluator`], and applies them. With several workers (one per evaluator), a
//! worker selects and applies under a lock and evaluates outside it; its batch gets a
//! ticket when selected and is applied in ticket order, so the FIFO of pending leaves
//! stays in step whatever order the evaluations finish in.

use std::sync::{Condvar, Mutex, MutexGuard};

use model::encoding::Encoder;
use model::{BatchError, EvalError, EvalSlot, Evaluation, Evaluator};

use crate::mcts::{Search, Step};
use crate::rng::Rng;

/// Something that evaluates a batch of encoded leaves.
pub trait LeafEvaluator {
    type Error;
    /// Evaluates the `n` positions whose input planes are concatenated in `inputs`.
    fn evaluate(&mut self, inputs: &[f32], n: usize) -> Result<&Evaluation, Self::Error>;
}

/// A forward pass in the calling thread.
pub struct DirectEvaluator<'a> {
    evaluator: &'a dyn Evaluator,
    out: Evaluation,
}

impl<'a> DirectEvaluator<'a> {
    pub fn new(evaluator: &'a dyn Evaluator) -> DirectEvaluator<'a> {
        DirectEvaluator { evaluator, out: Evaluation::new() }
    }
}

impl LeafEvaluator for DirectEvaluator<'_> {
    type Error = EvalError;
    fn evaluate(&mut self, inputs: &[f32], n: usize) -> Result<&Evaluation, EvalError> {
        self.evaluator.evaluate_into(inputs, n, &mut self.out)?;
        Ok(&self.out)
    }
}

/// A request to the batching service, which may merge it with other searches' leaves.
impl LeafEvaluator for EvalSlot {
    type Error = BatchError;
    fn evaluate(&mut self, inputs: &[f32], n: usize) -> Result<&Evaluation, BatchError> {
        // The copy into the request converts to the evaluator's plane kind on the way.
        self.write_f32(inputs, n)?;
        EvalSlot::evaluate(self)
    }
}

/// What a batched search did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchedRun {
    /// Calls of the evaluators.
    pub batches: u64,
    /// Leaves evaluated.
    pub leaves: u64,
    /// The largest batch.
    pub largest_batch: usize,
}

/// State shared by the workers of one batched search.
struct Shared<'s, E> {
    search: &'s mut Search,
    rng: &'s mut Rng,
    /// Tickets handed out and applied so far (batches apply in ticket order).
    issued: u64,
    applied: u64,
    /// No more leaves are selected (done, stopped, or an evaluation failed).
    halt: bool,
    error: Option<E>,
    run: BatchedRun,
}

impl Search {
    /// Runs the started search (see [`Search::start`]) to its end with batched leaf
    /// evaluations: one worker per evaluator (the first in the calling thread), each
    /// evaluating up to `batch` leaves per call. `stop(self)` is checked before each batch
    /// after the root's (a time budget). A failed evaluation stops the search (its leaves
    /// are backed up as draws, so the tree stays consistent) and its error is returned.
    pub fn run_batched<L>(
        &mut self,
        encoder: &Encoder,
        rng: &mut Rng,
        batch: usize,
        stop: &(dyn Fn(&Search) -> bool + Sync),
        evaluators: &mut [L],
    ) -> Result<BatchedRun, L::Error>
    where
        L: LeafEvaluator + Send,
        L::Error: Send,
    {
        let batch = batch.max(1);
        let shared = Mutex::new(Shared {
            search: self,
            rng,
            issued: 0,
            applied: 0,
            halt: false,
            error: None,
            run: BatchedRun::default(),
        });
        let turn = Condvar::new();
        let work = |ev: &mut L| worker(&shared, &turn, encoder, batch, stop, ev);
        match evaluators {
            [] => {}
            [only] => work(only),
            [first, rest @ ..] => std::thread::scope(|scope| {
                for ev in rest.iter_mut() {
                    scope.spawn(move || work(ev));
                }
                work(first);
            }),
        }
        let shared = shared.into_inner().unwrap_or_else(|e| e.into_inner());
        match shared.error {
            Some(e) => Err(e),
            None => Ok(shared.run),
        }
    }
}

fn lock<'a, 's, E>(m: &'a Mutex<Shared<'s, E>>) -> MutexGuard<'a, Shared<'s, E>> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One worker: select a batch, evaluate it outside the lock, apply it in ticket order.
fn worker<L: LeafEvaluator>(
    shared: &Mutex<Shared<'_, L::Error>>,
    turn: &Condvar,
    encoder: &Encoder,
    batch: usize,
    stop: &(dyn Fn(&Search) -> bool + Sync),
    evaluator: &mut L,
) {
    let len = encoder.input_len();
    let mut inputs = vec![0.0f32; len * batch];
    loop {
        let (ticket, n) = {
            let mut s = lock(shared);
            let n = loop {
                if s.halt {
                    return;
                }
                if s.search.simulations() > 1 && stop(&*s.search) {
                    s.halt = true;
                    turn.notify_all();
                    return;
                }
                let n = collect(&mut s, encoder, &mut inputs, batch);
                if n > 0 {
                    break n;
                }
                if s.search.pending() == 0 {
                    // Done: the budget is spent (or the root proven) and nothing is in flight.
                    s.halt = true;
                    turn.notify_all();
                    return;
                }
                // Every path ends in another worker's pending leaf: wait for its batch.
                s = turn.wait(s).unwrap_or_else(|e| e.into_inner());
            };
            s.issued += 1;
            (s.issued - 1, n)
        };
        let result = evaluator.evaluate(&inputs[..n * len], n);
        let mut s = lock(shared);
        while s.applied != ticket {
            s = turn.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        let Shared { search, rng, .. } = &mut *s;
        match result {
            Ok(out) => {
                for i in 0..n {
                    search.apply(out.logits(i), out.wdl(i), rng);
                }
            }
            Err(e) => {
                for _ in 0..n {
                    search.apply(&[], [0.0, 1.0, 0.0], rng);
                }
                s.halt = true;
                s.error.get_or_insert(e);
            }
        }
        s.applied += 1;
        s.run.batches += 1;
        s.run.leaves += n as u64;
        s.run.largest_batch = s.run.largest_batch.max(n);
        turn.notify_all();
    }
}

/// Selects up to `batch` leaves into `inputs`; returns how many need an evaluation.
fn collect<E>(s: &mut Shared<'_, E>, encoder: &Encoder, inputs: &mut [f32], batch: usize) -> usize {
    let len = encoder.input_len();
    let mut n = 0;
    while n < batch {
        match s.search.select(encoder, &mut inputs[n * len..(n + 1) * len], s.rng) {
            Step::NeedsEval => n += 1,
            Step::Done | Step::Collision => break,
        }
    }
    n
}
