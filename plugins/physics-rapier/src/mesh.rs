//! A small loader for the two mesh formats physics reads: STL (binary and ASCII) and
//! Wavefront OBJ (vertices and faces; polygons are split into triangle fans). Anything else
//! in those files (normals, texture coordinates, materials, groups) is ignored: collision
//! needs only the surface.

use std::path::Path;

/// A triangle mesh: vertex positions and triangles as indices into them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TriMesh {
    /// Vertex positions, in the file's units.
    pub vertices: Vec<[f64; 3]>,
    /// Triangles, counter-clockwise seen from outside when the file says so.
    pub triangles: Vec<[u32; 3]>,
}

/// The mesh formats physics understands, by file extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `.stl`
    Stl,
    /// `.obj`
    Obj,
}

impl Format {
    /// The format a file name's extension names, if physics reads it.
    pub fn of(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "stl" => Some(Format::Stl),
            "obj" => Some(Format::Obj),
            _ => None,
        }
    }
}

/// Reads a mesh file; the error names the file and what is wrong with it.
pub fn load(path: &Path) -> Result<TriMesh, String> {
    let format = Format::of(path).ok_or_else(|| format!("{}: not an STL or OBJ file", path.display()))?;
    let bytes = plugin_api::files::read(path, plugin_api::files::MESH_LIMIT)
        .map_err(|e| format!("cannot read mesh file {}: {e}", path.display()))?;
    let mesh = match format {
        Format::Stl => parse_stl(&bytes),
        Format::Obj => parse_obj(&bytes),
    }
    .map_err(|e| format!("mesh file {}: {e}", path.display()))?;
    if mesh.triangles.is_empty() {
        return Err(format!("mesh file {}: no triangles", path.display()));
    }
    if let Some(v) = mesh.vertices.iter().find(|v| v.iter().any(|c| !c.is_finite())) {
        return Err(format!("mesh file {}: vertex {v:?} is not finite", path.display()));
    }
    Ok(mesh)
}

/// Parses STL: binary when the size matches the triangle count in its header, else ASCII.
pub fn parse_stl(bytes: &[u8]) -> Result<TriMesh, String> {
    if bytes.len() >= 84 {
        let count = u32::from_le_bytes([bytes[80], bytes[81], bytes[82], bytes[83]]) as usize;
        if count.checked_mul(50).and_then(|n| n.checked_add(84)) == Some(bytes.len()) {
            return Ok(parse_stl_binary(&bytes[84..], count));
        }
    }
    let text = std::str::from_utf8(bytes)
        .map_err(|_| "neither binary STL (size does not match its triangle count) nor ASCII STL".to_string())?;
    if !text.trim_start().starts_with("solid") {
        return Err("neither binary STL (size does not match its triangle count) nor ASCII STL (no `solid`)".into());
    }
    parse_stl_ascii(text)
}

fn parse_stl_binary(data: &[u8], count: usize) -> TriMesh {
    let mut mesh = TriMesh::default();
    let f = |b: &[u8]| f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64;
    for t in 0..count {
        let rec = &data[t * 50..t * 50 + 50];
        let base = mesh.vertices.len() as u32;
        for v in 0..3 {
            let o = 12 + v * 12;
            mesh.vertices.push([f(&rec[o..]), f(&rec[o + 4..]), f(&rec[o + 8..])]);
        }
        mesh.triangles.push([base, base + 1, base + 2]);
    }
    mesh
}

fn parse_stl_ascii(text: &str) -> Result<TriMesh, String> {
    let mut mesh = TriMesh::default();
    let mut facet: Vec<[f64; 3]> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("vertex") => facet.push(parse_xyz(&mut words).map_err(|e| format!("line {}: {e}", n + 1))?),
            Some("endfacet") => {
                if facet.len() != 3 {
                    return Err(format!("line {}: a facet has {} vertices, not 3", n + 1, facet.len()));
                }
                let base = mesh.vertices.len() as u32;
                mesh.vertices.append(&mut facet);
                mesh.triangles.push([base, base + 1, base + 2]);
            }
            _ => {}
        }
    }
    Ok(mesh)
}

fn parse_xyz<'a>(words: &mut impl Iterator<Item = &'a str>) -> Result<[f64; 3], String> {
    let mut out = [0.0; 3];
    for c in &mut out {
        let w = words.next().ok_or("a vertex needs three coordinates")?;
        *c = w.parse().map_err(|_| format!("{w:?} is not a number"))?;
    }
    Ok(out)
}

/// Parses OBJ `v` and `f` lines (indices 1-based, negative ones relative to the end).
pub fn parse_obj(bytes: &[u8]) -> Result<TriMesh, String> {
    let text = String::from_utf8_lossy(bytes);
    let mut mesh = TriMesh::default();
    for (n, line) in text.lines().enumerate() {
        let at = |e: String| format!("line {}: {e}", n + 1);
        let mut words = line.split_whitespace();
        match words.next() {
            Some("v") => mesh.vertices.push(parse_xyz(&mut words).map_err(at)?),
            Some("f") => {
                let mut face = Vec::new();
                for w in words {
                    let first = w.split('/').next().unwrap_or("");
                    let i: i64 = first.parse().map_err(|_| at(format!("face index {w:?} is not a number")))?;
                    let count = mesh.vertices.len() as i64;
                    let index = if i > 0 { i - 1 } else { count + i };
                    if i == 0 || index < 0 || index >= count {
                        return Err(at(format!("face index {i} is outside the {count} vertices read so far")));
                    }
                    face.push(index as u32);
                }
                if face.len() < 3 {
                    return Err(at(format!("a face has {} vertices, at least 3 needed", face.len())));
                }
                for k in 1..face.len() - 1 {
                    mesh.triangles.push([face[0], face[k], face[k + 1]]);
                }
            }
            _ => {}
        }
    }
    Ok(mesh)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn obj_quads_become_two_triangles_and_negative_indices_count_from_the_end() {
        let m = parse_obj(b"v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\nf -4/1/1 -3//2 -2\n").unwrap();
        assert_eq!(m.vertices.len(), 4);
        assert_eq!(m.triangles, vec![[0, 1, 2], [0, 2, 3], [0, 1, 2]]);
    }

    #[test]
    fn obj_index_out_of_range_is_an_error_naming_the_line() {
        let e = parse_obj(b"v 0 0 0\nf 1 2 3\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("face index 2"), "{e}");
    }

    #[test]
    fn ascii_and_binary_stl_give_the_same_triangle() {
        let ascii = "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid t\n";
        let a = parse_stl(ascii.as_bytes()).unwrap();
        let mut bin = vec![0u8; 80];
        bin.extend_from_slice(&1u32.to_le_bytes());
        for v in [0f32, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0] {
            bin.extend_from_slice(&v.to_le_bytes());
        }
        bin.extend_from_slice(&[0, 0]);
        let b = parse_stl(&bin).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn truncated_binary_stl_is_an_error() {
        let mut bin = vec![0u8; 80];
        bin.extend_from_slice(&2u32.to_le_bytes());
        bin.extend_from_slice(&[0u8; 50]);
        assert!(parse_stl(&bin).unwrap_err().contains("neither binary STL"));
    }
}
