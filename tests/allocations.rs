//! An empty step allocates nothing: a world with three systems that implement only `update`
//! (gz-sim's default systems each implement one or two hooks), stepped after a warm-up, makes
//! no heap allocation on the stepping thread, in the runner or in the server around it.
//!
//! The count is per thread (a test's own thread), so other tests and the transport's
//! threads do not disturb it; the plugins' own allocations go through their libraries' own
//! allocator and are not counted (the systems here allocate nothing anyway).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::Duration;
use troupe::fixture::TestFixture;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

#[allow(unsafe_code, reason = "a global allocator is an unsafe trait; this one forwards to the system's")]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // try_with: a thread being torn down has no locals left; its allocations are not ours.
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: forwarded unchanged; the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged; `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: forwarded unchanged; the caller upholds `realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

const WORLD: &str = r#"<?xml version="1.0"?>
<sdf version="1.9">
  <world name="empty">
    <gz:policies><include_server_config_plugins>false</include_server_config_plugins></gz:policies>
    <plugin filename="troupe_testing" name="testing::Noop"/>
    <plugin filename="troupe_testing" name="testing::Noop"/>
    <plugin filename="troupe_testing" name="testing::Noop"/>
  </world>
</sdf>"#;

#[test]
fn an_empty_step_allocates_nothing() {
    let mut fixture = TestFixture::from_sdf(WORLD).expect("the world loads").finalize().expect("runnable");
    // Warm-up: buffers reach their size, lazily built caches are built.
    fixture.run(100).unwrap();
    let start = fixture.runner().clock.iterations();
    let server = fixture.server();
    let before = allocations();
    for _ in 0..1000 {
        server.step_once(Duration::ZERO).unwrap();
    }
    let made = allocations() - before;
    assert_eq!(made, 0, "{made} allocations in 1000 empty steps ({:.2} a step)", made as f64 / 1000.0);
    // The steps were steps, and the count counts.
    assert_eq!(fixture.runner().clock.iterations() - start, 1000);
    assert_eq!(fixture.runner().system_labels().iter().filter(|l| l.contains("testing::Noop")).count(), 3);
    let before = allocations();
    let probe = std::hint::black_box(vec![0u8; 64]);
    assert_eq!(allocations() - before, 1, "a Vec of {} bytes is one allocation", probe.len());
}
