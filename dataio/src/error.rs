//! What can go wrong with samples and chunk files.

use std::path::PathBuf;

use rules::Variant;

/// A sample chunk that cannot be read or written; each names the file and the problem.
#[derive(Debug, thiserror::Error)]
pub enum SampleError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: not a koma sample chunk (bad magic bytes)")]
    BadMagic { path: PathBuf },
    #[error(
        "{path}: sample chunk format version {found} is not supported (this build reads versions 1 to {supported})"
    )]
    UnsupportedVersion { path: PathBuf, found: u32, supported: u32 },
    #[error("{path}: truncated sample chunk: {found} bytes, expected {expected}")]
    Truncated { path: PathBuf, expected: u64, found: u64 },
    #[error("{path}: sample chunk is damaged: checksum mismatch (stored {stored:08x}, computed {computed:08x})")]
    ChecksumMismatch { path: PathBuf, stored: u32, computed: u32 },
    #[error("{path}: sample chunk is damaged: {reason}")]
    Corrupt { path: PathBuf, reason: String },
    #[error("{path}: sample chunk is for variant `{found}`, expected `{expected}`")]
    WrongVariant { path: PathBuf, expected: Variant, found: Variant },
    #[error("{path}: sample chunk uses encoder version {found}, expected {expected}")]
    WrongEncoderVersion { path: PathBuf, expected: u32, found: u32 },
    #[error("invalid sample{}: {reason}", index.map(|i| format!(" #{i}")).unwrap_or_default())]
    BadSample { index: Option<usize>, reason: String },
    /// The chunk is intact (its checksum matches) but a sample breaks the format's rules
    /// (see [`crate::SampleCheck`]): the whole chunk is refused.
    #[error("{path}: sample #{index} is invalid: {reason}")]
    InvalidSample { path: PathBuf, index: usize, reason: SampleFault },
}

/// How a sample breaks the format's rules ([`crate::SampleCheck`]).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SampleFault {
    #[error("SFEN `{sfen}` is not a {variant} position: {why}")]
    BadSfen { sfen: String, variant: Variant, why: String },
    #[error("a full-search sample without a policy target")]
    FullSearchWithoutPolicy,
    #[error("root WDL {0:?} is not three probabilities summing to 1")]
    BadRootWdl([f32; 3]),
    #[error("policy label {0} appears twice")]
    RepeatedLabel(u32),
    #[error("policy label {label} is not below the policy size {policy_size}")]
    LabelOutOfRange { label: u32, policy_size: u32 },
    #[error("policy label {label} has probability {probability}")]
    BadProbability { label: u32, probability: f32 },
    #[error("policy probabilities sum to {0}, not 1")]
    BadPolicySum(f32),
    #[error("policy label {0} is not a legal move of the position")]
    IllegalLabel(u32),
    #[error("reply policy: {0}")]
    BadReplyPolicy(Box<SampleFault>),
    #[error("future WDL {0:?} is not three probabilities summing to 1")]
    BadFutureWdl([f32; 3]),
    #[error("final material {0} is not finite")]
    BadFinalMaterial(f32),
}
