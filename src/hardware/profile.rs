//! The machine a run targets: GPU model x count plus an optional host.

use super::Gpu;

/// Host facts; `None` means unknown, which keeps the rules that need it silent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Host {
    pub cpu_cores: Option<u32>,
    pub ram_gb: Option<f64>,
    pub storage_mb_s: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// How the user named it (`workstation`, `h100-sxm`, a file path).
    pub name: String,
    pub gpu: Gpu,
    /// GPUs in the machine; `None` under the built-in default target, where the world size of
    /// a run is unknown (DESIGN.md "World size").
    pub gpus: Option<u32>,
    pub host: Host,
    /// True when nothing was configured and the built-in default is in use.
    pub is_default: bool,
}

impl Target {
    /// `1 x rtx-4090 (23.6 GiB), 16 cores, 64 GB RAM`.
    pub fn describe(&self) -> String {
        // A bare GPU name says which GPU, not how many (DESIGN.md "World size").
        let mut s = match self.gpus {
            Some(n) => format!("{n} x {} ({:.1} GiB)", self.gpu.key, self.gpu.vram_gib()),
            None => format!("{} ({:.1} GiB)", self.gpu.key, self.gpu.vram_gib()),
        };
        if let Some(c) = self.host.cpu_cores {
            s.push_str(&format!(", {c} cores"));
        }
        if let Some(r) = self.host.ram_gb {
            s.push_str(&format!(", {r} GB RAM"));
        }
        s
    }
}
