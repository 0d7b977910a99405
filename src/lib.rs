//! hwlint: lint and auto-fix machine-learning training configs against the hardware they run on.

pub mod app;
pub mod cli;
pub mod dialect;
pub mod discover;
pub mod estimate;
pub mod fix;
pub mod hardware;
pub mod launch;
pub mod lint;
pub mod project;
pub mod report;
pub mod rules;
pub mod settings;
pub mod source;
pub mod syntax;
