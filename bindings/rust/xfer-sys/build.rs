// SPDX-License-Identifier: Apache-2.0
//! Finds libxfer for linking and for running, in this order:
//!
//! 1. `XFER_LIB_DIR`: the folder holding `libxfer.so` (a build tree's `build/lib`; CMake's tests
//!    set it).
//! 2. pkg-config: `pkg-config --variable=libdir xfer` (the program named by `PKG_CONFIG`, else
//!    `pkg-config`), so an installed xfer needs one variable, `PKG_CONFIG_PATH=<prefix>/lib/pkgconfig`,
//!    and none when `xfer.pc` is on pkg-config's default path (a system-wide install).
//! 3. Neither: the linker's default search path, with a warning.
//!
//! For the folder found it emits the search path, `-lxfer`, an rpath for this package's own
//! test binary, and `cargo:lib_dir=<folder>`, which Cargo hands to packages that depend on
//! xfer-sys directly as `DEP_XFER_LIB_DIR`. Cargo passes a build script's link arguments only
//! to its own package's binaries, so a dependent that wants `cargo run` to work without
//! `LD_LIBRARY_PATH` adds the rpath itself from `DEP_XFER_LIB_DIR` (the `xfer` crate does).
//! A folder named by either source that holds no `libxfer.so` stops the build with a message
//! saying where it came from, instead of a linker error later.
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    for var in ["XFER_LIB_DIR", "PKG_CONFIG", "PKG_CONFIG_PATH", "PKG_CONFIG_LIBDIR", "PKG_CONFIG_SYSROOT_DIR"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=build.rs");

    let found = match env::var("XFER_LIB_DIR") {
        Ok(dir) if !dir.is_empty() => Some((PathBuf::from(dir), "XFER_LIB_DIR")),
        _ => pkg_config_libdir().map(|dir| (dir, "pkg-config --variable=libdir xfer")),
    };
    match found {
        Some((dir, source)) => {
            if !dir.join("libxfer.so").exists() {
                panic!("xfer-sys: {} (from {source}) holds no libxfer.so", dir.display());
            }
            // A clean absolute path: pkg-config answers <prefix>/lib/pkgconfig/../../lib for a
            // relocatable xfer.pc, and the rpath is read by the loader from any working folder.
            let dir = dir.canonicalize().unwrap_or(dir);
            let dir = dir.display();
            println!("cargo:rustc-link-search=native={dir}");
            println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
            println!("cargo:lib_dir={dir}");
        }
        None => println!(
            "cargo:warning=xfer-sys: neither XFER_LIB_DIR nor pkg-config (PKG_CONFIG_PATH=<prefix>/lib/pkgconfig) \
             found libxfer; linking against the linker's default search path"
        ),
    }
    println!("cargo:rustc-link-lib=dylib=xfer");
}

/// libdir of xfer.pc, or None when pkg-config is missing or does not know xfer.
fn pkg_config_libdir() -> Option<PathBuf> {
    let program = env::var("PKG_CONFIG").ok().filter(|p| !p.is_empty()).unwrap_or_else(|| "pkg-config".into());
    let out = Command::new(&program).args(["--variable=libdir", "xfer"]).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let dir = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!dir.is_empty()).then(|| Path::new(&dir).to_path_buf())
}
