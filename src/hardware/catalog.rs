//! The GPU catalog compiled into the binary from `rules/hardware.toml`.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

/// `rules/hardware.toml`, converted to JSON by build.rs (faster to read at start-up).
const HARDWARE_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/rules/hardware.json"));

/// One GPU model as the catalog describes it.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Gpu {
    #[serde(skip)]
    pub key: String,
    pub name: String,
    #[serde(default)]
    pub aliases: Vec<String>,
    /// Memory as the driver reports it to CUDA, in bytes.
    pub vram_bytes: u64,
    /// True when `vram_bytes` is a datasheet or typical figure, not a measurement.
    #[serde(default)]
    pub approximate: bool,
    /// The CUDA context's own memory, outside the allocator.
    pub context_bytes: u64,
    pub compute_capability: String,
    pub bf16: bool,
    pub fp8: bool,
    /// Tensor cores for the block-scaled MXFP8 / NVFP4 formats (Blackwell, compute capability
    /// 10.0+).
    #[serde(default)]
    pub mx_formats: bool,
    pub flash_attention_2: bool,
    pub memory_bandwidth_gb_s: f64,
    pub bf16_tflops: f64,
    pub fp32_tflops: f64,
    #[serde(default)]
    pub source: String,
}

impl Gpu {
    /// Compute capability as (major, minor).
    pub fn cc(&self) -> (u32, u32) {
        let mut it = self.compute_capability.split('.');
        let major = it.next().and_then(|s| s.parse().ok()).unwrap_or(0);
        let minor = it.next().and_then(|s| s.parse().ok()).unwrap_or(0);
        (major, minor)
    }

    pub fn vram_gib(&self) -> f64 {
        self.vram_bytes as f64 / (1u64 << 30) as f64
    }
}

/// A whole machine as written in the catalog or in a config file's `[target]` table.
#[derive(Debug, Clone, Deserialize, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TargetSpec {
    pub gpu: Option<String>,
    pub gpus: Option<u32>,
    pub cpu_cores: Option<u32>,
    pub ram_gb: Option<f64>,
    pub storage_mb_s: Option<f64>,
}

/// How much the caching allocator reserves beyond the live tensors (see
/// `estimate::verdict::need_bytes`).
#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Allocator {
    /// Reserved beyond the forward/backward peak, per byte of its transient part.
    pub transient: f64,
    /// Reserved beyond the optimizer step, per byte of the forward/backward transient part.
    pub step_transient: f64,
    /// The forward/backward share with activation checkpointing, whose recomputation
    /// interleaves short-lived block-sized tensors with the checkpoints kept until backward.
    pub transient_checkpointed: f64,
    /// Reserved whatever the step (cuBLAS workspaces, the allocator's rounding), bytes.
    pub overhead_bytes: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogFile {
    catalog_date: String,
    allocator: Allocator,
    gpu: BTreeMap<String, Gpu>,
    target: BTreeMap<String, TargetSpec>,
}

#[derive(Debug)]
pub struct Catalog {
    pub date: String,
    pub allocator: Allocator,
    pub gpus: Vec<Gpu>,
    pub targets: BTreeMap<String, TargetSpec>,
}

impl Catalog {
    /// Finds a GPU by catalog key, alias or the name `nvidia-smi` prints (case-insensitive).
    pub fn gpu(&self, name: &str) -> Option<&Gpu> {
        let n = normalize(name);
        self.gpus
            .iter()
            .find(|g| normalize(&g.key) == n)
            .or_else(|| {
                self.gpus.iter().find(|g| {
                    normalize(&g.name) == n || g.aliases.iter().any(|a| normalize(a) == n)
                })
            })
    }
}

impl Catalog {
    /// The GPUs whose key a partial name starts (`h100` -> `h100-sxm`, `h100-pcie`): a bare
    /// family name picks none of them silently.
    pub fn gpus_starting(&self, name: &str) -> Vec<&str> {
        let n = normalize(name);
        self.gpus
            .iter()
            .filter(|g| normalize(&g.key).starts_with(&format!("{n}-")))
            .map(|g| g.key.as_str())
            .collect()
    }
}

fn normalize(s: &str) -> String {
    s.trim()
        .to_ascii_lowercase()
        .trim_start_matches("nvidia ")
        .replace([' ', '_'], "-")
}

/// The built-in catalog, parsed once.
pub fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| {
        // The file is compiled in and checked by a unit test, so a failure here is a build bug.
        let file: CatalogFile = serde_json::from_str(HARDWARE_JSON)
            .expect("rules/hardware.toml is valid (unit-tested)");
        let gpus = file
            .gpu
            .into_iter()
            .map(|(key, mut g)| {
                g.key = key;
                g
            })
            .collect();
        Catalog {
            date: file.catalog_date,
            allocator: file.allocator,
            gpus,
            targets: file.target,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_parses_and_covers_the_required_gpus() {
        let c = catalog();
        for key in [
            "rtx-3090",
            "rtx-4080",
            "rtx-4090",
            "rtx-5090",
            "rtx-6000-ada",
            "rtx-pro-6000",
            "a10g",
            "l4",
            "l40s",
            "t4",
            "v100-16gb",
            "v100-32gb",
            "a100-40gb",
            "a100-80gb",
            "h100-pcie",
            "h100-sxm",
            "h200",
            "b200",
        ] {
            let g = c.gpu(key).unwrap_or_else(|| panic!("{key} missing"));
            assert!(g.vram_bytes > 10 << 30, "{key}");
            assert!(g.context_bytes < g.vram_bytes / 10, "{key}");
        }
        assert_eq!(c.gpu("NVIDIA H100 80GB HBM3").unwrap().key, "h100-sxm");
        assert_eq!(c.gpu("Tesla T4").unwrap().key, "t4");
        assert!(!c.gpu("v100-16gb").unwrap().bf16);
        assert_eq!(c.gpu("rtx-4090").unwrap().cc(), (8, 9));
        assert!(c.targets.contains_key("workstation"));
    }
}
