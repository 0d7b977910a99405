//! Hardware: the built-in GPU catalog (rules/hardware.toml) and the machine a run targets.

mod catalog;
pub mod detect;
mod profile;

pub use catalog::{catalog, Allocator, Catalog, Gpu, TargetSpec};
pub use profile::{Host, Target};
