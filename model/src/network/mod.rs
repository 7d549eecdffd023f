//! The network as libtorch modules ([`net`]): training, and the fused inference form. Its
//! settings, sizes and parameter table are the `nn` crate's.

pub mod net;
