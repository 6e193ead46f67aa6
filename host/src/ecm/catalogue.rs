//! Registers plugin-api's built-in components with an ECM, as typed specs storages.

use super::store::TypedStore;
use super::Ecm;
use plugin_api::Component;

/// Adds every built-in component type: exactly plugin-api's catalogue list.
pub(super) fn register_builtins(ecm: &mut Ecm) {
    macro_rules! register {
        ($($ty:ty),* $(,)?) => {
            $( ecm.add_column(<$ty>::ID, <$ty>::NAME, <$ty>::FIXED_SIZE, Box::new(TypedStore::<$ty>::new())); )*
        };
    }
    plugin_api::for_each_builtin_component!(register);
}
