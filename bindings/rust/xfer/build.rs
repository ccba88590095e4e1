// SPDX-License-Identifier: Apache-2.0
//! Gives this package's own binaries (examples, tests, benches) an rpath to the libxfer that
//! xfer-sys linked, so `cargo run --example ...` and `cargo test` work without LD_LIBRARY_PATH.
//! xfer-sys finds the folder (XFER_LIB_DIR, else pkg-config) and hands it over as
//! DEP_XFER_LIB_DIR; Cargo passes link arguments of a build script only to its own package's
//! binaries, so each package that builds binaries adds the rpath itself.
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_XFER_LIB_DIR");
    println!("cargo:rerun-if-changed=build.rs");
    if let Ok(dir) = std::env::var("DEP_XFER_LIB_DIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
