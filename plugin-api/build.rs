//! Compiles `proto/gz/msgs/*.proto` into Rust with prost, without a system `protoc`:
//! protox (pure Rust) parses the files into a descriptor set that prost-build turns into
//! code in `OUT_DIR/gz.msgs.rs`, included by `src/msgs.rs`, and that also writes the
//! descriptor set (`OUT_DIR/gz.msgs.descriptor.bin`) for reflection.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from("proto");
    let dir = root.join("gz/msgs");
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
    let fds = protox::compile(&files, [&root])?;
    // The descriptor set itself, for tools that print and parse messages by type name.
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out.join("gz.msgs.descriptor.bin"), prost::Message::encode_to_vec(&fds))?;
    prost_build::Config::new()
        // Sorted maps: a state encodes to the same bytes every time (logs, fingerprints).
        .btree_map(["."])
        // `prost::Name`: each message knows its type name (`gz.msgs.Pose`), which typed
        // publishers and services put on the wire.
        .enable_type_names()
        .compile_fds(fds)?;
    Ok(())
}
