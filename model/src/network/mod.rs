//! The network itself: its architecture ([`config`]), its input and output sizes
//! ([`shape`]), the ResNet built on tch ([`net`]) and its parameter table computed
//! without building it ([`params`]). Nothing here reads or writes files.

pub mod config;
pub mod net;
pub mod params;
pub mod shape;
