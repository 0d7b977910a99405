//! hwlint: lint and auto-fix machine-learning training configs against the hardware they run on.

pub mod dialect;
pub mod fix;
pub mod hardware;
pub mod syntax;
