//! The memory estimator: pure functions from (setup, architecture, target) to bytes.

pub mod activations;
#[cfg(test)]
mod bases;
pub mod command;
pub mod detector;
pub mod memory;
pub mod models;
pub mod params;
pub mod plan;
pub mod step;
pub mod throughput;
pub mod verdict;
