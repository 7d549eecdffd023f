//! The network itself: its architecture ([`config`]), its input and output sizes
//! ([`shape`]) and the ResNet built on tch ([`net`]). Nothing here reads or writes files.

pub mod config;
pub mod net;
pub mod shape;
