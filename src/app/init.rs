//! `hwlint init`: a commented hwlint.toml to start from, with this machine as the target when
//! it has a GPU (a machine without one is rarely the one the runs train on).

use std::io::Write;
use std::path::Path;

use miette::Report;

use crate::hardware::detect;

/// The file's text: every key documented, the detected `[target]` when there is a GPU.
pub fn template(found: &detect::Detected) -> String {
    let has_gpu = matches!(&found.gpus, Ok(g) if !g.is_empty());
    let target = if has_gpu {
        detect::target_toml(found)
    } else {
        let why = match &found.gpus {
            Err(e) => e.clone(),
            Ok(_) => "nvidia-smi listed none".to_string(),
        };
        format!(
            "# The machine your runs train on. No GPU was found here ({why}); on the training\n\
             # machine, `hwlint detect --write hwlint.toml` fills this in. A bare GPU name sets the\n\
             # GPU, not how many (`hwlint targets` lists the names):\n\
             # target = \"h100-sxm\"\n\
             # or the whole machine:\n\
             # [target]\n\
             # gpu = \"h100-sxm\"\n\
             # gpus = 8\n\
             # cpu_cores = 96\n\
             # ram_gb = 1024.0\n\
             # storage_mb_s = 2000.0\n"
        )
    };
    format!(
        "# hwlint.toml: settings for hwlint. Every key is optional; the closest hwlint.toml (or\n\
         # .hwlint.toml, or [tool.hwlint] in pyproject.toml) above a file applies to it, and\n\
         # command-line flags win over it. `hwlint check --show-settings FILE` shows what applies.\n\
         \n\
         # Rules to run and to skip: codes or prefixes (`hwlint rules` lists them).\n\
         # select = [\"HW1\", \"HW2\", \"HW3\"]\n\
         # ignore = [\"HW205\"]\n\
         \n\
         # Paths hwlint skips, as globs relative to this file.\n\
         # exclude = [\"third_party/**\", \"templates/**\"]\n\
         \n\
         # Host RAM one dataloader worker uses, in GB (HW203; default 2.5).\n\
         # ram_per_worker_gb = 2.5\n\
         \n\
         # Model architectures hwlint's catalog lacks, for the memory estimate:\n\
         # [models.\"our-org/internal-7b\"]\n\
         # family = \"llama\"\n\
         # ...       (see `hwlint rule HW901`)\n\
         \n\
         # Rules skipped for some files only:\n\
         # [per-file-ignores]\n\
         # \"legacy/*.yaml\" = [\"HW202\"]\n\
         \n\
         # Another machine for some paths:\n\
         # [[per-path]]\n\
         # paths = [\"cluster/**\"]\n\
         # target = \"h100-sxm\"\n\
         # gpus = 8\n\
         \n\
         {target}"
    )
}

pub(super) fn init(path: &Path) -> Result<u8, Report> {
    let text = template(&detect::detect());
    // `create_new`: an existing file is the user's, never replaced.
    let mut f = match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(miette::miette!(
                help = "edit it, or add the detected machine with `hwlint detect --write {}`",
                "{} already exists; not overwritten",
                path.display()
            ))
        }
        Err(e) => return Err(miette::miette!("cannot create {}: {e}", path.display())),
    };
    f.write_all(text.as_bytes())
        .map_err(|e| miette::miette!("cannot write {}: {e}", path.display()))?;
    super::emit_err(&format!("wrote {}\n", path.display()));
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hardware::detect::Host;

    #[test]
    fn the_template_is_a_valid_config_with_and_without_a_gpu() {
        let without = detect::Detected {
            gpus: Err("nvidia-smi not found".into()),
            host: Host {
                cpu_cores: Some(8),
                ram_gb: Some(32.0),
            },
        };
        let with = detect::Detected {
            gpus: Ok(detect::parse_nvidia_smi(
                "NVIDIA H100 80GB HBM3, 81559 MiB, 9.0\n",
            )),
            ..without.clone()
        };
        for (d, gpu) in [(&without, None), (&with, Some("h100-sxm"))] {
            let text = template(d);
            let file: crate::settings::ConfigFile = toml::from_str(&text).unwrap();
            match (gpu, &file.target) {
                (None, None) => assert!(text.contains("hwlint detect --write")),
                (Some(g), Some(crate::settings::TargetField::Inline(spec))) => {
                    assert_eq!(spec.gpu.as_deref(), Some(g))
                }
                other => panic!("{other:?}\n{text}"),
            }
        }
    }
}
