//! Compiles the host's own protocol messages (`proto/troupe/*.proto`, today the distributed
//! step protocol) with protox + prost-build, the pure-Rust way `plugin-api/build.rs` does.
//! The gz-msgs types they import (`gz.msgs.SerializedStateMap`) are not generated again:
//! `extern_path` points them at `plugin_api::msgs`, so both sides share one Rust type.
//! The descriptor set (`OUT_DIR/troupe.distributed.descriptor.bin`) is written too, for
//! printing and parsing the messages as protobuf text (the protocol's trace files).

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from("proto");
    let gz_root = PathBuf::from("../plugin-api/proto");
    let dir = root.join("troupe");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "proto"))
        .collect();
    // A fixed order keeps the generated file identical from build to build.
    files.sort();
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    let fds = protox::compile(&files, [&root, &gz_root])?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out.join("troupe.distributed.descriptor.bin"), prost::Message::encode_to_vec(&fds))?;
    prost_build::Config::new()
        .extern_path(".gz.msgs", "::plugin_api::msgs")
        // Sorted maps: a message encodes to the same bytes every time.
        .btree_map(["."])
        .enable_type_names()
        .compile_fds(fds)?;
    Ok(())
}
