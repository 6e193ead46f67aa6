//! Bad input: errors stop the load and name the element and its line (all of them at
//! once); warnings let the run go on.

use crate::support::{load, set, try_load};

/// 1-based line of the first line of `text` containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    1 + text.lines().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("{needle:?} not in the world"))
}

/// A world with models a, b (with a collision) and c (without), and `body` in its levels
/// plugin.
fn world(body: &str) -> String {
    format!(
        r#"<sdf version="1.9"><world name="w">
  <model name="a"><link name="l"><collision name="c"><geometry><sphere><radius>1</radius></sphere></geometry></collision></link></model>
  <model name="b"><link name="l"><collision name="c"><geometry><box><size>1 1 1</size></box></geometry></collision></link></model>
  <model name="c"><link name="l"/></model>
  <plugin name="gz::sim" filename="dummy">
{body}
  </plugin>
</world></sdf>"#
    )
}

fn error_of(text: &str) -> String {
    match try_load(text, true) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e,
    }
}

/// Asserts the error names `<levels test>:LINE` for the line holding `needle`, and says
/// `what`.
fn assert_error(body: &str, needle: &str, what: &str) {
    let text = world(body);
    let e = error_of(&text);
    let at = format!("<levels test>:{}:", line_of(&text, needle));
    assert!(e.contains(&at), "{e:?} should name {at}");
    assert!(e.contains(what), "{e:?} should say {what:?}");
}

#[test]
fn a_level_without_a_box_is_an_error() {
    assert_error(
        r#"    <level name="nobox"><ref>a</ref></level>"#,
        "nobox",
        "<level name=\"nobox\"> has no <geometry><box>",
    );
    assert_error(
        "    <level name=\"round\">\n      <geometry><cylinder><radius>1</radius><length>1</length></cylinder></geometry>\n    </level>",
        "<cylinder>",
        "only <box> geometry is supported, found <cylinder>",
    );
}

#[test]
fn a_buffer_that_is_not_a_number_is_an_error() {
    assert_error(
        "    <level name=\"l\">\n      <geometry><box><size>1 1 1</size></box></geometry>\n      <buffer>wide</buffer>\n    </level>",
        "<buffer>",
        "<buffer> needs a number of metres, found \"wide\"",
    );
}

#[test]
fn two_performers_on_one_model_are_an_error() {
    assert_error(
        "    <performer name=\"p1\"><ref>a</ref></performer>\n    <performer name=\"p2\"><ref>a</ref></performer>",
        "p2",
        "refers to model \"a\", which performer \"p1\" already is",
    );
}

#[test]
fn a_performer_needs_exactly_one_ref() {
    assert_error(r#"    <performer name="none"></performer>"#, "none", "<performer name=\"none\"> has no <ref>");
    assert_error(r#"    <performer name="two"><ref>a</ref><ref>b</ref></performer>"#, "two", "has 2 <ref>s (a, b)");
}

#[test]
fn a_performer_with_no_geometry_and_no_collision_is_an_error() {
    assert_error(
        r#"    <performer name="hollow"><ref>c</ref></performer>"#,
        "hollow",
        "gives no <geometry> and its model \"c\" has no <collision>",
    );
}

#[test]
fn every_problem_is_reported_at_once() {
    let text = world(
        "    <level name=\"nobox\"/>\n    <performer name=\"none\"></performer>\n    <performer name=\"hollow\"><ref>c</ref></performer>",
    );
    let e = error_of(&text);
    for needle in ["nobox", "none", "hollow"] {
        assert!(e.contains(&format!("<levels test>:{}:", line_of(&text, needle))), "{e}");
    }
    assert!(e.contains("and 2 more"), "{e}");
}

#[test]
fn warnings_leave_the_run_going() {
    let body = r#"    <performer name="ghost"><ref>nobody</ref></performer>
    <performer name="pa"><ref>a</ref></performer>
    <level name="l1">
      <geometry><box><size>4 4 4</size></box></geometry>
      <buffer>-3</buffer>
      <ref>b</ref>
      <ref>missing</ref>
    </level>"#;
    let text = world(body);
    let doc = troupe::sdf::parse_str(&text, "<levels test>").expect("warnings only");
    let warnings = doc.warnings.join("\n");
    let at = |needle: &str| format!("<levels test>:{}:", line_of(&text, needle));
    assert!(
        warnings.contains(&format!(
            "{} <performer name=\"ghost\">: <ref>nobody</ref> names nothing in the world; the performer is dropped",
            at("ghost")
        )),
        "{warnings}"
    );
    assert!(
        warnings.contains(&format!("{} <level name=\"l1\">: negative <buffer> -3 is read as 0", at("<buffer>"))),
        "{warnings}"
    );
    assert!(
        warnings.contains("<level name=\"l1\">: <ref>missing</ref> names nothing in the world; ignored"),
        "{warnings}"
    );
    let w = &doc.worlds[0];
    assert_eq!(w.performers.len(), 1, "the ghost performer is dropped");
    assert_eq!(w.levels[0].buffer, 0.0);
    assert_eq!(w.levels[0].refs, ["b"]);

    // And it runs: a's volume (a 2 m sphere at the origin) touches l1, which loads b.
    let mut run = load(&text, true);
    run.f.run(2).unwrap();
    assert!(run.level_loaded("l1"));
    assert_eq!(run.models(), set(&["a", "b", "c"]));
}
