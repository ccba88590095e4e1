// SPDX-License-Identifier: Apache-2.0
//! Finds libxfer: XFER_LIB_DIR (the folder holding libxfer.so) if set, else `pkg-config
//! --variable=libdir xfer` (an installed xfer; PKG_CONFIG_PATH points at <prefix>/lib/pkgconfig).
//! Without either, the linker's default search path is used. At run time libxfer.so.1 is found
//! through LD_LIBRARY_PATH, the program's RUNPATH or ldconfig. Dependents read the folder as
//! DEP_XFER_LIB_DIR.
use std::env;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=XFER_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    let dir = env::var("XFER_LIB_DIR").ok().filter(|d| !d.is_empty()).or_else(|| {
        let out = Command::new("pkg-config").args(["--variable=libdir", "xfer"]).output().ok()?;
        let dir = String::from_utf8(out.stdout).ok()?.trim().to_string();
        (out.status.success() && !dir.is_empty()).then_some(dir)
    });
    match dir {
        Some(dir) => {
            println!("cargo:rustc-link-search=native={dir}");
            println!("cargo:lib_dir={dir}");
        }
        None => println!("cargo:warning=xfer-sys: neither XFER_LIB_DIR nor pkg-config xfer found libxfer; using the linker's default search path"),
    }
    println!("cargo:rustc-link-lib=dylib=xfer");
}
