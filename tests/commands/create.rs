//! create, create_multiple and remove.

use crate::support::*;
use plugin_api::components::{Light, LightKind, Link, Model};
use plugin_api::math::Pose;
use plugin_api::msgs::{self, entity_factory::From, EntityFactory};
use plugin_api::Component;

fn sdf(text: &str) -> EntityFactory {
    EntityFactory { from: Some(From::Sdf(text.into())), ..Default::default() }
}

const SPHERE: &str = r#"<sdf version="1.9"><model name="sphere"><link name="body"/></model></sdf>"#;

#[test]
fn create_makes_a_model_with_its_links_at_the_requested_pose() {
    let mut f = fixture(BOX_WORLD);
    let mut req = sdf(SPHERE);
    req.pose = Some(msgs::Pose {
        position: Some(msgs::Vector3d { x: 1.0, y: 2.0, z: 3.0, ..Default::default() }),
        ..Default::default()
    });
    let before = f.ecm().entity_count();
    assert!(call(&mut f, "create/blocking", &req).ok());
    let sphere = find(f.ecm(), "sphere").expect("the sphere exists after the blocking call");
    assert!(f.ecm().has::<Model>(sphere));
    let body = find(f.ecm(), "sphere/body").expect("its link");
    assert!(f.ecm().has::<Link>(body));
    assert_eq!(f.ecm().get::<Pose>(sphere).unwrap(), Pose::from_xyz_rpy(1.0, 2.0, 3.0, 0.0, 0.0, 0.0));
    assert_eq!(f.ecm().entity_count(), before + 2, "a model and its link");
    // The plain service answers true at once, and the entity follows.
    assert!(call(&mut f, "create", &EntityFactory { name: "other".into(), ..sdf(SPHERE) }).ok());
    f.run(2).unwrap();
    assert!(find(f.ecm(), "other").is_some(), "{:?}", top_level_names(f.ecm()));
}

#[test]
fn an_existing_name_fails_unless_renaming_is_allowed() {
    let mut f = fixture(BOX_WORLD);
    let boxed = r#"<model name="box"><link name="l"/></model>"#;
    let before = f.ecm().entity_count();
    assert!(!call(&mut f, "create/blocking", &sdf(boxed)).ok(), "box exists already");
    assert_eq!(f.ecm().entity_count(), before, "nothing was created");
    let renaming = EntityFactory { allow_renaming: true, ..sdf(boxed) };
    assert!(call(&mut f, "create/blocking", &renaming).ok());
    assert!(call(&mut f, "create/blocking", &renaming).ok());
    let names = top_level_names(f.ecm());
    assert!(names.contains(&"box_0".to_string()) && names.contains(&"box_1".to_string()), "{names:?}");
    // A name in the request wins over the SDF's; it must be free too.
    assert!(call(&mut f, "create/blocking", &EntityFactory { name: "crate".into(), ..sdf(boxed) }).ok());
    assert!(find(f.ecm(), "crate/l").is_some());
    assert!(!call(&mut f, "create/blocking", &EntityFactory { name: "crate".into(), ..sdf(boxed) }).ok());
}

#[test]
fn bad_requests_answer_false_and_the_world_keeps_stepping() {
    let mut f = fixture(BOX_WORLD);
    let before = f.ecm().entity_count();
    let bad = [
        sdf("<sdf><model name='broken'><link name='l'></model></sdf>"),
        sdf("<sdf><world name='nested'/></sdf>"),
        sdf(""),
        EntityFactory::default(),
        EntityFactory { from: Some(From::SdfFilename("/no/such/model.sdf".into())), ..Default::default() },
        EntityFactory { from: Some(From::CloneName("box".into())), ..Default::default() },
    ];
    for req in &bad {
        assert!(!call(&mut f, "create/blocking", req).ok(), "{req:?} was accepted");
    }
    // The plain service answers true on taking the request, as gz-sim's does; the command
    // then fails in the log.
    assert!(call(&mut f, "create", &bad[0]).ok());
    // Bytes that are not an EntityFactory at all.
    assert!(!call_raw(&mut f, "/world/w/create/blocking", vec![0xff, 0xff, 0xff]).ok());
    assert!(!call_raw(&mut f, "/world/w/create", vec![0xff, 0xff, 0xff]).ok(), "undecodable even for the plain one");
    assert_eq!(f.ecm().entity_count(), before);
    let it = f.runner().clock.iterations();
    f.run(3).unwrap();
    assert_eq!(f.runner().clock.iterations(), it + 3, "the world still steps");
    assert!(call(&mut f, "create/blocking", &sdf(SPHERE)).ok(), "and still serves");
}

#[test]
fn create_reads_sdf_files_and_light_messages() {
    let mut f = fixture(BOX_WORLD);
    let dir = std::env::temp_dir().join(format!("troupe-commands-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("ball")).unwrap();
    std::fs::write(dir.join("ball/model.sdf"), SPHERE.replace("sphere", "ball")).unwrap();
    let from_dir =
        EntityFactory { from: Some(From::SdfFilename(dir.join("ball").display().to_string())), ..Default::default() };
    assert!(call(&mut f, "create/blocking", &from_dir).ok());
    assert!(find(f.ecm(), "ball/body").is_some());

    let light = msgs::Light {
        name: "spot1".into(),
        r#type: msgs::light::LightType::Spot as i32,
        intensity: 2.5,
        range: 20.0,
        pose: Some(msgs::Pose {
            position: Some(msgs::Vector3d { z: 4.0, ..Default::default() }),
            ..Default::default()
        }),
        ..Default::default()
    };
    assert!(
        call(&mut f, "create/blocking", &EntityFactory { from: Some(From::Light(light)), ..Default::default() }).ok()
    );
    let e = find(f.ecm(), "spot1").expect("the light");
    let l = f.ecm().get::<Light>(e).unwrap();
    assert_eq!((l.kind, l.intensity, l.range), (LightKind::Spot, 2.5, 20.0));
    assert_eq!(f.ecm().get::<Pose>(e).unwrap().position.z, 4.0);
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn create_multiple_answers_the_and_of_its_items() {
    let mut f = fixture(BOX_WORLD);
    let good = EntityFactory { name: "a".into(), ..sdf(SPHERE) };
    let also = EntityFactory { name: "b".into(), ..sdf(SPHERE) };
    let v = msgs::EntityFactoryV { data: vec![good.clone(), also], ..Default::default() };
    assert!(call(&mut f, "create_multiple/blocking", &v).ok());
    let v = msgs::EntityFactoryV {
        data: vec![EntityFactory { name: "c".into(), ..sdf(SPHERE) }, good],
        ..Default::default()
    };
    assert!(!call(&mut f, "create_multiple/blocking", &v).ok(), "a exists already");
    let names = top_level_names(f.ecm());
    for n in ["a", "b", "c"] {
        assert!(names.contains(&n.to_string()), "{n} missing from {names:?}");
    }
}

#[test]
fn a_created_model_loads_its_own_plugins() {
    let mut f = fixture(BOX_WORLD);
    let with_plugin = r#"<model name="counted"><link name="l"/>
        <plugin filename="troupe_template" name="troupe::Template"><every>1</every></plugin></model>"#;
    assert!(call(&mut f, "create/blocking", &sdf(with_plugin)).ok());
    f.run(3).unwrap();
    let labels = f.runner().system_labels();
    assert!(labels.iter().any(|l| l.starts_with("troupe::Template")), "{labels:?}");
    let counted = find(f.ecm(), "counted").unwrap();
    let steps = f.ecm().get::<StepCount>(counted).expect("the template system counts steps on the new model");
    assert!(steps.0 >= 1, "{steps:?}");
}

/// The template plugin's step counter (troupe_template.StepCount), read by name.
#[derive(Clone, Debug)]
struct StepCount(u64);

impl Component for StepCount {
    const NAME: &'static str = "troupe_template.StepCount";
    const FIXED_SIZE: Option<usize> = Some(8);
    fn encode(&self, w: &mut plugin_api::Writer<'_>) {
        w.u64(self.0)
    }
    fn decode(r: &mut plugin_api::Reader<'_>) -> Result<Self, plugin_api::DecodeError> {
        Ok(StepCount(r.u64()?))
    }
}

fn entity(id: u64, name: &str, ty: msgs::entity::Type) -> msgs::Entity {
    msgs::Entity { id, name: name.into(), r#type: ty as i32, ..Default::default() }
}

#[test]
fn remove_takes_top_level_models_and_lights_by_id_or_by_name_and_type() {
    use msgs::entity::Type;
    let mut f = fixture(BOX_WORLD);
    let link = find(f.ecm(), "box/link").unwrap();
    let inner = find(f.ecm(), "box/inner").unwrap();
    let refused = [
        entity(link.0, "", Type::None),           // a link
        entity(inner.0, "", Type::None),          // a nested model
        entity(world(f.ecm()).0, "", Type::None), // the world
        entity(999_999, "", Type::None),          // no such entity
        entity(0, "box", Type::Light),            // box is a model
        entity(0, "box", Type::Link),             // not a type remove takes by name
        entity(0, "ghost", Type::Model),          // no such model
        entity(0, "", Type::Model),               // nothing named
    ];
    for req in &refused {
        assert!(!call(&mut f, "remove/blocking", req).ok(), "{req:?} was accepted");
    }
    assert!(find(f.ecm(), "box/link").is_some(), "nothing was removed");

    let lamp = find(f.ecm(), "lamp").unwrap();
    assert!(call(&mut f, "remove/blocking", &entity(lamp.0, "", Type::None)).ok());
    assert!(!f.ecm().has_entity(lamp), "removed at the end of the step that carried it out");
    assert!(call(&mut f, "remove/blocking", &entity(0, "box", Type::Model)).ok());
    for e in [link, inner] {
        assert!(!f.ecm().has_entity(e), "the model's descendants go too");
    }
    assert!(top_level_names(f.ecm()).is_empty(), "{:?}", top_level_names(f.ecm()));
}

#[test]
fn reset_takes_the_world_back_to_before_the_commands() {
    let mut f = fixture(BOX_WORLD);
    assert!(call(&mut f, "create/blocking", &sdf(SPHERE)).ok());
    assert!(find(f.ecm(), "sphere").is_some());
    f.runner_mut().request_reset();
    f.run(1).unwrap();
    assert!(find(f.ecm(), "sphere").is_none(), "{:?}", top_level_names(f.ecm()));
    // The services outlive the reset.
    assert!(call(&mut f, "create/blocking", &sdf(SPHERE)).ok());
    assert!(find(f.ecm(), "sphere").is_some());
}
