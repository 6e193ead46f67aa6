//! Before xml-rs reads a document, the forms tinyxml2 (libsdformat's XML reader) accepts
//! and xml-rs refuses are rewritten into plain XML:
//!
//! * `--` inside a comment (`<!-- run with --levels -->`), and a comment ending in `--->`:
//!   the offending `-` become spaces;
//! * XML declarations after leading whitespace, and several of them: every declaration
//!   before anything else in the document is blanked (the text is already decoded, so its
//!   `encoding` has nothing left to say);
//! * a declaration missing its `<` before the root element (a stray `?xml version="1.0"?>`
//!   line, as gz-sim's `test/worlds/reset_detachable_joint.sdf` begins): blanked likewise
//!   (tinyxml2 takes any text before the root as ignored text; other text stays an error);
//! * a name with one `::` (`<gz::system_priority>`, in gz-sim's `sensors.sdf`): read as the
//!   prefixed name `gz:system_priority`, the `:` removed written as a space after the name.
//!
//! Every rewrite replaces one character by one character and keeps line ends, so each
//! character keeps its line and column: positions found in the repaired text are positions
//! in the caller's text. What tinyxml2 refuses too (a declaration after a comment or an
//! element, text after the root element, unclosed or mismatched elements) is left for
//! xml-rs to report.

use super::scan::skip_doctype;
use std::borrow::Cow;

/// `text` with the repairs above (borrowed when none applies).
pub(crate) fn repair(text: &str) -> Cow<'_, str> {
    let edits = edits(text);
    if edits.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for (start, end, replacement) in edits {
        out.push_str(text.get(from..start).unwrap_or(""));
        out.push_str(&replacement);
        from = end;
    }
    out.push_str(text.get(from..).unwrap_or(""));
    Cow::Owned(out)
}

/// An edit: the byte range `start..end` of the text is replaced by the string, which has as
/// many characters and the same line ends.
type Edit = (usize, usize, String);

/// The edits `text` needs, in ascending order, not overlapping.
fn edits(text: &str) -> Vec<Edit> {
    let mut out = Vec::new();
    // Before the root element's start tag; and whether only whitespace and declarations
    // came so far (where tinyxml2 accepts a declaration).
    let (mut prolog, mut declarations_allowed) = (true, true);
    let mut i = 0;
    while i < text.len() {
        let lt = text.get(i..).and_then(|t| t.find('<')).map_or(text.len(), |k| i + k);
        if prolog && text.get(i..lt).is_some_and(|t| !t.trim().is_empty()) {
            if declarations_allowed && is_declaration(text[i..lt].trim()) {
                out.push((i, lt, blank(&text[i..lt])));
            }
            declarations_allowed = false;
        }
        let Some(rest) = text.get(lt..).filter(|r| !r.is_empty()) else { break };
        let skip_to = |end: &str, from: usize| rest.get(from..)?.find(end).map(|e| from + e + end.len());
        let next = if rest.starts_with("<!--") {
            declarations_allowed = false;
            let end = skip_to("-->", 4);
            if let Some(e) = end {
                comment(lt + 4, &rest[4..e - 3], &mut out);
            }
            end
        } else if rest.starts_with("<![CDATA[") {
            skip_to("]]>", 9)
        } else if rest.starts_with("<?") {
            let end = skip_to("?>", 2);
            match end {
                Some(e) if prolog && declarations_allowed && is_declaration(&rest[1..e]) => {
                    out.push((lt, lt + e, blank(&rest[..e])));
                }
                _ => declarations_allowed = false,
            }
            end
        } else if rest.starts_with("<!") {
            declarations_allowed = false;
            skip_doctype(rest)
        } else if let Some(after) = rest.strip_prefix("</") {
            name(text, lt + 2, name_len(after), &mut out);
            skip_to(">", 2)
        } else {
            (prolog, declarations_allowed) = (false, false);
            start_tag(text, lt + 1, &mut out)
        };
        match next {
            Some(n) if n > 0 => i = lt + n,
            _ => break,
        }
    }
    out
}

/// Whether `s` is an XML declaration without its `<`: `?xml`, then whitespace or `?`, and
/// the last `?>`.
fn is_declaration(s: &str) -> bool {
    s.strip_prefix("?xml").is_some_and(|r| r.starts_with(|c: char| c == '?' || c.is_whitespace()) && r.ends_with("?>"))
}

/// Every character but whitespace (line ends included) as a space.
fn blank(s: &str) -> String {
    s.chars().map(|c| if c.is_whitespace() { c } else { ' ' }).collect()
}

/// The edit for a comment body at byte `at` holding `--` or ending in `-`: each `-` that
/// is followed by another, or ends the body, becomes a space.
fn comment(at: usize, body: &str, out: &mut Vec<Edit>) {
    let bytes = body.as_bytes();
    let bad = |k: usize| bytes[k] == b'-' && bytes.get(k + 1).is_none_or(|&b| b == b'-');
    if (0..bytes.len()).any(bad) {
        let fixed = bytes.iter().enumerate().map(|(k, &b)| if bad(k) { b' ' } else { b });
        // Only ASCII '-' became ASCII ' ': still UTF-8.
        let fixed = String::from_utf8(fixed.collect()).unwrap_or_else(|_| body.to_string());
        out.push((at, at + body.len(), fixed));
    }
}

/// The byte length of the name at the start of `s`.
fn name_len(s: &str) -> usize {
    s.find(|c: char| c.is_whitespace() || matches!(c, '/' | '>' | '=' | '"' | '\'' | '<')).unwrap_or(s.len())
}

/// The edit for the name at bytes `at..at + len` when it is `prefix::local` (one `::`, no
/// other colon, neither side empty): `prefix:local ` (the removed colon as a space after
/// the name, where XML allows whitespace).
fn name(text: &str, at: usize, len: usize, out: &mut Vec<Edit>) {
    let Some(name) = text.get(at..at + len) else { return };
    let Some((prefix, local)) = name.split_once("::") else { return };
    if prefix.is_empty() || local.is_empty() || prefix.contains(':') || local.contains(':') {
        return;
    }
    out.push((at, at + len, format!("{prefix}:{local} ")));
}

/// Scans the start tag whose name begins at byte `from`, adding the edits of its names.
/// Returns the byte length from the tag's `<` to just past its `>` (None if unterminated).
fn start_tag(text: &str, from: usize, out: &mut Vec<Edit>) -> Option<usize> {
    let rest = text.get(from..)?;
    let len = name_len(rest);
    name(text, from, len, out);
    let mut i = from + len;
    loop {
        let c = text.get(i..)?.chars().next()?;
        if c == '>' || c == '<' {
            // `<` ends a broken tag: xml-rs reports it; the next tag is scanned from there.
            return Some(i + usize::from(c == '>') + 1 - from);
        } else if c == '"' || c == '\'' {
            i += text.get(i + 1..)?.find(c)? + 2;
        } else if c.is_whitespace() || matches!(c, '/' | '=') {
            i += c.len_utf8();
        } else {
            let len = name_len(text.get(i..)?).max(c.len_utf8());
            name(text, i, len, out);
            i += len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::repair;

    /// Each line's length in characters, and its end.
    fn shape(s: &str) -> Vec<(usize, &str)> {
        s.split_inclusive(['\n', '\r']).map(|l| (l.chars().count(), &l[l.len() - 1..])).collect()
    }

    #[test]
    fn every_character_keeps_its_line_and_column() {
        let texts = [
            " \r\n<?xml version='1.0' encoding='é'?>\r<!-- a -- b --->\né x\n<r a::b='--'><!-- -->\
             <gz::é>-- x</gz::é><![CDATA[<!-- -- -->]]></r>",
            "<a><!----><!-----></a>",
        ];
        for text in texts {
            let fixed = repair(text);
            assert_eq!(shape(&fixed), shape(text), "{fixed:?}");
        }
    }

    #[test]
    fn only_what_xml_rs_refuses_is_rewritten() {
        let text = "<!-- a - b -->\n<a:b c:d='::' e='--'>-- ::<![CDATA[--]]></a:b>";
        assert!(matches!(repair(text), std::borrow::Cow::Borrowed(_)));
        let fixed = repair(" <?xml version='1.0'?>\n<!-- a -- b --->\n<r x::y='<!-- -- -->'><gz::é/></r>");
        assert_eq!(fixed, "                      \n<!-- a  - b  -->\n<r x:y ='<!-- -- -->'><gz:é /></r>");
    }
}
