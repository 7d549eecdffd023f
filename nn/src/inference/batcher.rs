//! The batching service: one thread per device turns many small requests into few large
//! forward passes.
//!
//! Producers (self-play workers) hold an [`EvalSlot`] each: a reusable set of buffers
//! for up to N positions. A worker writes the encoded leaves of all its games into
//! [`EvalSlot::planes_mut`] (in the evaluator's [`crate::PlaneKind`]: f16 or bf16 planes
//! for a network that runs in that precision, so that half the bytes cross to the device),
//! calls [`EvalSlot::submit`] then [`EvalSlot::wait`] (or
//! [`EvalSlot::evaluate`] for both) and reads the results from the slot. The buffers
//! travel to the batcher thread inside the request and come back inside the reply, so the
//! steady state allocates nothing per request or per position.
//!
//! The batcher thread takes the first queued request, then keeps gathering until the
//! batch holds `max_batch` positions or `max_wait` has passed since that first request,
//! and hands the requests to the evaluator as the parts of one forward pass
//! ([`Evaluator::evaluate_parts`]): a [`crate::TorchEvaluator`] copies each request's
//! buffer once to the device and gives each its slice of the results, with no
//! concatenation on the host. A request larger than `max_batch` runs alone in one pass of
//! its own size. Input buffers are page-locked when the evaluator runs on CUDA. An
//! evaluator swapped in later may take another plane kind; it converts what it is given.
//!
//! A producer keeps the device busy by having two requests out at once (two slots,
//! double buffering): while one batch runs, it selects the leaves of the next.
//!
//! Shutdown ([`Batcher::shutdown`] or dropping the [`Batcher`]): new submissions fail with
//! [`BatchError::Closed`]; every request submitted before is still evaluated and answered;
//! then the thread is joined. If a request is ever dropped without an answer (the thread
//! died), its producer's `wait` returns [`BatchError::Lost`] instead of hanging.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TryRecvError};

use super::evaluation::Evaluation;
use super::evaluator::{check_input, EvalError, EvalPart, Evaluator};
use super::host_buffer::{HostBuffer, PinnedMemory};
use super::planes::{PlaneKind, Planes};
use crate::network::shape::NetShape;

/// Settings of a [`Batcher`].
#[derive(Clone, Debug)]
pub struct BatcherConfig {
    /// Target number of positions per forward pass (B). Default 256.
    pub max_batch: usize,
    /// Longest wait for more requests after the first one of a batch arrived (T).
    /// Default 1 ms. Zero: run whatever is queued at once.
    pub max_wait: Duration,
    /// Thread name, e.g. `koma-batcher-cuda0`.
    pub thread_name: String,
}

impl Default for BatcherConfig {
    fn default() -> Self {
        BatcherConfig { max_batch: 256, max_wait: Duration::from_millis(1), thread_name: "koma-batcher".to_string() }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BatchError {
    #[error("the batcher is shut down")]
    Closed,
    #[error("the request was lost: the batcher thread stopped without answering it")]
    Lost,
    #[error("no request is pending on this slot")]
    NotSubmitted,
    #[error("a request is already pending on this slot")]
    Pending,
    #[error("evaluation failed: {0}")]
    Eval(EvalError),
}

// The cause is in the message; not also `Error::source`, so it prints once.
impl From<EvalError> for BatchError {
    fn from(e: EvalError) -> Self {
        BatchError::Eval(e)
    }
}

/// Counters of a [`Batcher`] since it started.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BatcherStats {
    /// Forward passes run.
    pub forward_passes: u64,
    /// Positions evaluated.
    pub positions: u64,
    /// Requests answered (successfully or with an error).
    pub requests: u64,
    /// Time spent inside the evaluator, in seconds.
    pub eval_seconds: f64,
}

impl BatcherStats {
    /// Mean positions per forward pass.
    pub fn mean_batch(&self) -> f64 {
        if self.forward_passes == 0 {
            0.0
        } else {
            self.positions as f64 / self.forward_passes as f64
        }
    }

    /// Positions per second of evaluator time.
    pub fn positions_per_eval_second(&self) -> f64 {
        if self.eval_seconds > 0.0 {
            self.positions as f64 / self.eval_seconds
        } else {
            0.0
        }
    }
}

#[derive(Default)]
struct Counters {
    forward_passes: AtomicU64,
    positions: AtomicU64,
    requests: AtomicU64,
    eval_nanos: AtomicU64,
}

struct Shared {
    shape: NetShape,
    /// Where the slots' input buffers come from when their evaluator wants pinned memory.
    pinned: Option<Arc<dyn PinnedMemory>>,
    /// The number type the slots' input planes are written in (the first evaluator's).
    input_kind: PlaneKind,
    /// `true` once shut down. Submissions send while holding the read lock and shutdown
    /// takes the write lock before queueing `Stop`, so every accepted request is queued
    /// before `Stop` and the thread (FIFO) answers it.
    closed: RwLock<bool>,
    counters: Counters,
}

/// Buffers owned by a slot; they move with the request and come back with the reply.
#[derive(Debug, Default)]
struct Buffers {
    inputs: HostBuffer,
    n: usize,
    out: Evaluation,
}

struct Request {
    bufs: Buffers,
    reply: Sender<Reply>,
}

struct Reply {
    bufs: Buffers,
    result: Result<(), BatchError>,
    /// The slot's reply sender, handed back for the next request (the slot holds no sender
    /// while a request is out, so a dropped request disconnects its receiver).
    reply: Sender<Reply>,
}

enum Msg {
    Eval(Request),
    Swap(Arc<dyn Evaluator>),
    Stop,
}

/// A cloneable handle for producers. Cheap to clone and `Send`.
#[derive(Clone)]
pub struct BatcherHandle {
    tx: Sender<Msg>,
    shared: Arc<Shared>,
}

/// The batching service for one evaluator (one device). Dropping it shuts it down.
pub struct Batcher {
    handle: BatcherHandle,
    thread: Option<JoinHandle<()>>,
}

impl Batcher {
    /// Starts the batcher thread.
    pub fn spawn(evaluator: Arc<dyn Evaluator>, config: BatcherConfig) -> Batcher {
        let (tx, rx) = crossbeam_channel::unbounded();
        let shared = Arc::new(Shared {
            shape: evaluator.shape(),
            pinned: evaluator.pinned_memory(),
            input_kind: evaluator.input_kind(),
            closed: RwLock::new(false),
            counters: Counters::default(),
        });
        let worker = Worker::new(evaluator, config.clone(), shared.clone(), rx);
        let thread = std::thread::Builder::new()
            .name(config.thread_name.clone())
            .spawn(move || worker.run())
            .expect("spawn batcher thread");
        Batcher { handle: BatcherHandle { tx, shared }, thread: Some(thread) }
    }

    pub fn handle(&self) -> BatcherHandle {
        self.handle.clone()
    }

    pub fn stats(&self) -> BatcherStats {
        self.handle.stats()
    }

    /// Replaces the evaluator (new weights) for the batches that start after the requests
    /// already queued. The shape must not change.
    pub fn replace_evaluator(&self, evaluator: Arc<dyn Evaluator>) -> Result<(), BatchError> {
        let shape = evaluator.shape();
        if shape != self.handle.shared.shape {
            return Err(EvalError::ShapeMismatch { expected: self.handle.shared.shape, found: shape }.into());
        }
        let closed = self.handle.shared.closed.read().unwrap_or_else(|e| e.into_inner());
        if *closed {
            return Err(BatchError::Closed);
        }
        self.handle.tx.send(Msg::Swap(evaluator)).map_err(|_| BatchError::Closed)
    }

    /// Stops accepting requests, answers every request already submitted, joins the
    /// thread and returns the final counters.
    pub fn shutdown(mut self) -> BatcherStats {
        self.close_and_join();
        self.stats()
    }

    fn close_and_join(&mut self) {
        {
            let mut closed = self.handle.shared.closed.write().unwrap_or_else(|e| e.into_inner());
            if !*closed {
                *closed = true;
                let _ = self.handle.tx.send(Msg::Stop);
            }
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Batcher {
    fn drop(&mut self) {
        self.close_and_join();
    }
}

impl BatcherHandle {
    pub fn shape(&self) -> NetShape {
        self.shared.shape
    }

    /// A new slot with its own reusable buffers and reply channel.
    pub fn slot(&self) -> EvalSlot {
        let (reply_tx, reply_rx) = crossbeam_channel::bounded(1);
        EvalSlot {
            bufs: Some(self.fresh_buffers(false)),
            handle: self.clone(),
            reply_tx: Some(reply_tx),
            reply_rx,
            reduced_precision: false,
        }
    }

    fn fresh_buffers(&self, reduced_precision: bool) -> Buffers {
        let mut out = Evaluation::new();
        out.accept_reduced_precision(reduced_precision);
        Buffers { inputs: HostBuffer::new(self.shared.pinned.clone(), self.shared.input_kind), n: 0, out }
    }

    pub fn stats(&self) -> BatcherStats {
        let c = &self.shared.counters;
        BatcherStats {
            forward_passes: c.forward_passes.load(Ordering::Relaxed),
            positions: c.positions.load(Ordering::Relaxed),
            requests: c.requests.load(Ordering::Relaxed),
            eval_seconds: c.eval_nanos.load(Ordering::Relaxed) as f64 * 1e-9,
        }
    }

    /// One-off evaluation that allocates (a temporary slot); prefer a long-lived
    /// [`EvalSlot`] in loops.
    pub fn evaluate(&self, inputs: &[f32], n: usize) -> Result<Evaluation, BatchError> {
        let mut slot = self.slot();
        slot.write_f32(inputs, n)?;
        slot.evaluate()?;
        Ok(slot.into_output().expect("evaluated slot has output"))
    }
}

/// A producer's reusable request: input buffer for N positions, output buffers, and a
/// reply channel. Not `Clone`; one per worker (or per in-flight batch of a worker).
pub struct EvalSlot {
    handle: BatcherHandle,
    /// `None` while a request is out.
    bufs: Option<Buffers>,
    /// `None` while a request is out (it travels with the request).
    reply_tx: Option<Sender<Reply>>,
    reply_rx: Receiver<Reply>,
    /// Results may come in the evaluator's precision.
    reduced_precision: bool,
}

impl EvalSlot {
    /// The input buffer sized for `n` positions (`n * input_len` values of the
    /// evaluator's [`PlaneKind`], reusing the allocation; contents unspecified): encode
    /// positions into it ([`crate::encoding::Encoder::encode_planes`]), then submit.
    /// Panics if a request is pending.
    pub fn planes_mut(&mut self, n: usize) -> Planes<'_> {
        self.planes_in_storage(n).0
    }

    /// [`EvalSlot::planes_mut`], with the id of the memory they are in
    /// ([`HostBuffer::storage_id`]): while it stays the same from one request to the next,
    /// the values written for the last request are still there.
    pub fn planes_in_storage(&mut self, n: usize) -> (Planes<'_>, u64) {
        let len = n * self.handle.shared.shape.input_len();
        let bufs = self.bufs.as_mut().expect("EvalSlot::planes_mut while a request is pending");
        bufs.n = n;
        bufs.inputs.resize(len);
        let id = bufs.inputs.storage_id();
        (bufs.inputs.planes_mut(), id)
    }

    /// [`EvalSlot::planes_mut`] as f32, for evaluators that take f32 planes (test
    /// doubles, f32 networks). Panics if a request is pending or the planes are not f32.
    pub fn inputs_mut(&mut self, n: usize) -> &mut [f32] {
        match self.planes_mut(n) {
            Planes::F32(s) => s,
            other => panic!("EvalSlot::inputs_mut: the evaluator takes {:?} planes", other.kind()),
        }
    }

    /// Writes `n` positions' f32 planes into the request, converted to the slot's kind.
    pub fn write_f32(&mut self, inputs: &[f32], n: usize) -> Result<(), EvalError> {
        check_input(&self.handle.shared.shape, inputs.into(), n)?;
        self.planes_mut(n).copy_from_f32(inputs);
        Ok(())
    }

    /// Keeps only the first `n` positions written into [`EvalSlot::planes_mut`] (a
    /// producer sizes the buffer for every position it might send, encodes, then says how
    /// many it did). Panics if a request is pending.
    pub fn set_len(&mut self, n: usize) {
        let len = n * self.handle.shared.shape.input_len();
        let bufs = self.bufs.as_mut().expect("EvalSlot::set_len while a request is pending");
        bufs.n = bufs.n.min(n);
        bufs.inputs.truncate(len);
    }

    /// Lets the results come in the evaluator's precision (f16 or bf16 logits, read with
    /// [`Evaluation::logits`]) instead of f32. Panics if a request is pending.
    pub fn accept_reduced_precision(&mut self, yes: bool) {
        self.reduced_precision = yes;
        self.bufs.as_mut().expect("EvalSlot::accept_reduced_precision while pending").out.accept_reduced_precision(yes);
    }

    /// Positions in the current request.
    pub fn len(&self) -> usize {
        self.bufs.as_ref().map_or(0, |b| b.n)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether a request is out (submitted, not yet waited for).
    pub fn is_pending(&self) -> bool {
        self.bufs.is_none()
    }

    /// Queues the positions written by [`EvalSlot::planes_mut`]. Does not block.
    pub fn submit(&mut self) -> Result<(), BatchError> {
        if self.bufs.is_none() {
            return Err(BatchError::Pending);
        }
        let closed = self.handle.shared.closed.read().unwrap_or_else(|e| e.into_inner());
        if *closed {
            return Err(BatchError::Closed);
        }
        let bufs = self.bufs.take().expect("checked");
        let reply = self.reply_tx.take().expect("reply sender present when idle");
        match self.handle.tx.send(Msg::Eval(Request { bufs, reply })) {
            Ok(()) => Ok(()),
            Err(crossbeam_channel::SendError(msg)) => {
                // The thread is gone (it panicked): take the buffers back.
                if let Msg::Eval(r) = msg {
                    self.bufs = Some(r.bufs);
                    self.reply_tx = Some(r.reply);
                }
                Err(BatchError::Closed)
            }
        }
    }

    /// Blocks until the pending request is answered. On success the results are in
    /// [`EvalSlot::output`] (also returned).
    pub fn wait(&mut self) -> Result<&Evaluation, BatchError> {
        if self.bufs.is_some() {
            return Err(BatchError::NotSubmitted);
        }
        match self.reply_rx.recv() {
            Ok(reply) => {
                self.bufs = Some(reply.bufs);
                self.reply_tx = Some(reply.reply);
                reply.result?;
                Ok(&self.bufs.as_ref().expect("just set").out)
            }
            Err(_) => {
                // The request was dropped unanswered: start over with fresh buffers.
                let (tx, rx) = crossbeam_channel::bounded(1);
                self.reply_tx = Some(tx);
                self.reply_rx = rx;
                self.bufs = Some(self.handle.fresh_buffers(self.reduced_precision));
                Err(BatchError::Lost)
            }
        }
    }

    /// [`EvalSlot::submit`] then [`EvalSlot::wait`].
    pub fn evaluate(&mut self) -> Result<&Evaluation, BatchError> {
        self.submit()?;
        self.wait()
    }

    /// Results of the last answered request (`None` while pending).
    pub fn output(&self) -> Option<&Evaluation> {
        self.bufs.as_ref().map(|b| &b.out)
    }

    fn into_output(mut self) -> Option<Evaluation> {
        self.bufs.take().map(|b| b.out)
    }
}

impl Drop for EvalSlot {
    fn drop(&mut self) {
        // Wait for a request still out, so that it is not answered into the void (and its
        // positions are counted); ignore the result.
        // (The reply sender travels with the request, so it is absent exactly then.)
        if self.reply_tx.is_none() {
            let _ = self.reply_rx.recv();
        }
    }
}

struct Worker {
    evaluator: Arc<dyn Evaluator>,
    config: BatcherConfig,
    shared: Arc<Shared>,
    rx: Receiver<Msg>,
    /// Requests of the batch being gathered.
    batch: Vec<Request>,
    positions: usize,
    /// A request that did not fit into the previous batch.
    carry: Option<Request>,
    pending_swap: Option<Arc<dyn Evaluator>>,
    stopping: bool,
    disconnected: bool,
}

impl Worker {
    fn new(evaluator: Arc<dyn Evaluator>, config: BatcherConfig, shared: Arc<Shared>, rx: Receiver<Msg>) -> Worker {
        let max_batch = config.max_batch.max(1);
        Worker {
            evaluator,
            config: BatcherConfig { max_batch, ..config },
            shared,
            rx,
            batch: Vec::new(),
            positions: 0,
            carry: None,
            pending_swap: None,
            stopping: false,
            disconnected: false,
        }
    }

    fn run(mut self) {
        loop {
            // The first request of the next batch.
            let first = match self.carry.take() {
                Some(r) => r,
                None => match self.next_first() {
                    Some(r) => r,
                    None => break,
                },
            };
            self.positions = first.bufs.n;
            self.batch.push(first);
            self.gather();
            self.run_batch();
            if let Some(e) = self.pending_swap.take() {
                self.evaluator = e;
            }
        }
    }

    /// Blocks for the first request of a batch, handling control messages. `None`: time
    /// to exit (stopped and drained, or every sender gone).
    fn next_first(&mut self) -> Option<Request> {
        loop {
            let msg = if self.stopping || self.disconnected {
                match self.rx.try_recv() {
                    Ok(m) => m,
                    Err(TryRecvError::Empty) | Err(TryRecvError::Disconnected) => return None,
                }
            } else {
                match self.rx.recv() {
                    Ok(m) => m,
                    Err(_) => return None,
                }
            };
            match msg {
                Msg::Eval(r) => return Some(r),
                Msg::Swap(e) => self.evaluator = e,
                Msg::Stop => self.stopping = true,
            }
        }
    }

    /// Adds requests until the batch is full, `max_wait` has passed, or the queue is
    /// closed.
    fn gather(&mut self) {
        let deadline = Instant::now() + self.config.max_wait;
        while self.positions < self.config.max_batch {
            let msg = if self.stopping || self.disconnected || self.config.max_wait.is_zero() {
                match self.rx.try_recv() {
                    Ok(m) => m,
                    Err(TryRecvError::Empty) => return,
                    Err(TryRecvError::Disconnected) => {
                        self.disconnected = true;
                        return;
                    }
                }
            } else {
                match self.rx.recv_deadline(deadline) {
                    Ok(m) => m,
                    Err(RecvTimeoutError::Timeout) => return,
                    Err(RecvTimeoutError::Disconnected) => {
                        self.disconnected = true;
                        return;
                    }
                }
            };
            match msg {
                Msg::Eval(r) => {
                    if self.positions + r.bufs.n > self.config.max_batch {
                        self.carry = Some(r);
                        return;
                    }
                    self.positions += r.bufs.n;
                    self.batch.push(r);
                }
                Msg::Swap(e) => {
                    // Applies after this batch, which was gathered for the old weights.
                    self.pending_swap = Some(e);
                    return;
                }
                Msg::Stop => self.stopping = true,
            }
        }
    }

    /// One forward pass over the gathered requests, then the replies.
    fn run_batch(&mut self) {
        let total = self.positions;
        let started = Instant::now();
        let mut parts: Vec<EvalPart<'_>> = self
            .batch
            .iter_mut()
            .map(|r| EvalPart { inputs: r.bufs.inputs.planes(), n: r.bufs.n, out: &mut r.bufs.out })
            .collect();
        let evaluator = &self.evaluator;
        let result = catch(|| evaluator.evaluate_parts(&mut parts));
        drop(parts);
        let c = &self.shared.counters;
        c.eval_nanos.fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
        c.forward_passes.fetch_add(1, Ordering::Relaxed);
        c.positions.fetch_add(total as u64, Ordering::Relaxed);
        c.requests.fetch_add(self.batch.len() as u64, Ordering::Relaxed);
        for req in self.batch.drain(..) {
            let Request { bufs, reply } = req;
            let result = result.clone().map_err(BatchError::Eval);
            // A producer that vanished (slot dropped without waiting is impossible, see
            // EvalSlot::drop) would make this fail; nothing to do then.
            let _ = reply.clone().send(Reply { bufs, result, reply });
        }
        self.positions = 0;
    }
}

/// Runs `f`, turning a panic into an error so that one bad batch does not kill the
/// service (and every pending request still gets its answer).
fn catch<F: FnOnce() -> Result<(), EvalError>>(f: F) -> Result<(), EvalError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(EvalError::Panic(msg))
        }
    }
}
