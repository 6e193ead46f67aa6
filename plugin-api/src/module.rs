//! The root module every plugin library exports, and the macro that exports it.
#![allow(unsafe_code, reason = "the prefix-type derive and the library header are abi_stable glue")]

use crate::ffi::{SystemError, SystemObj};
use crate::system_info::SystemInfo;
use abi_stable::library::{LibHeader, RootModule, RootModuleResult};
use abi_stable::std_types::{ROption, RResult, RStr, RString, RVec};
use abi_stable::{declare_root_module_statics, package_version_strings, StableAbi};

/// Forwards a plugin's `log` records to the host's logger.
#[repr(C)]
#[derive(StableAbi, Clone, Copy)]
pub struct HostLogger {
    /// The most verbose level the host prints (0 off, 1 error ... 5 trace).
    pub max_level: u8,
    /// Prints one record: library name, level (1 error ... 5 trace), target, message.
    pub log: extern "C" fn(library: RStr<'_>, level: u8, target: RStr<'_>, message: RStr<'_>),
}

/// The root module of a Troupe plugin library: a prefix type, so fields are only ever
/// appended, and a host can load libraries built against any `1.x` of this crate.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = PluginModRef)))]
#[sabi(missing_field(panic))]
pub struct PluginMod {
    /// The library's name, e.g. `troupe_template`.
    pub library_name: extern "C" fn() -> RStr<'static>,
    /// Installs the host's logger for the library's `log` records.
    pub set_logger: extern "C" fn(HostLogger),
    /// Creates the system called `name` (empty: the library's first system).
    #[sabi(last_prefix_field)]
    pub new_system: extern "C" fn(name: RStr<'_>) -> RResult<SystemObj, SystemError>,
    /// Names of the systems the library offers (added in plugin-api 1.1).
    #[sabi(missing_field(option))]
    pub system_names: extern "C" fn() -> RVec<RString>,
    /// What the system called `name` is ([`crate::System::info`]; empty: the first system);
    /// `RNone` for a name the library does not have (added in plugin-api 1.8: a host reads an
    /// older library's systems as [`SystemInfo::OTHER`]).
    #[sabi(missing_field(option))]
    pub system_info: extern "C" fn(name: RStr<'_>) -> ROption<SystemInfo>,
}

impl RootModule for PluginModRef {
    declare_root_module_statics! {PluginModRef}
    const BASE_NAME: &'static str = "troupe_plugin";
    const NAME: &'static str = "troupe plugin";
    const VERSION_STRINGS: abi_stable::sabi_types::VersionStrings = package_version_strings!();
}

/// The symbol abi_stable looks up in a library (checked against abi_stable in a test).
#[doc(hidden)]
pub const LIB_HEADER_SYMBOL: &str = "_1as_0lib_1header_0root_bmodule_bloader";

/// Builds the library header for [`export_plugin!`]; not for direct use.
#[doc(hidden)]
pub const fn __lib_header(constructor: extern "C" fn() -> RootModuleResult) -> LibHeader {
    // SAFETY: `constructor` returns a `PrefixRef<PluginMod>` erased by
    // `__call_root_module_loader`, which is what `from_constructor::<PluginModRef>` requires.
    unsafe { LibHeader::from_constructor::<PluginModRef>(constructor, abi_stable::library::CheckTypeLayout::Yes) }
}

/// Items the export macro expands to; not for direct use.
#[doc(hidden)]
pub mod __private {
    pub use crate::logging::install as install_logger;
    pub use abi_stable::library::{__call_root_module_loader, LibHeader, RootModuleResult};
    pub use abi_stable::prefix_type::PrefixTypeTrait;
    pub use abi_stable::std_types::{RErr, RNone, ROk, ROption, RResult, RSome, RStr, RString, RVec};

    /// The [`crate::System::info`] of the type `_make` would create; `_make` is not called.
    pub fn info_of<S: crate::System>(_make: &dyn Fn() -> S) -> crate::SystemInfo {
        S::info()
    }
}

/// Exports a plugin library: its name and the systems it offers.
///
/// ```ignore
/// plugin_api::export_plugin! {
///     library: "my_plugin",
///     systems: {
///         "my::Counter" | "counter" => Counter::default(),
///     }
/// }
/// ```
///
/// Each entry lists the names the system answers to (the `name` attribute of `<plugin>`)
/// and an expression creating it (a [`crate::System`]). An empty name selects the first
/// system. Every call into the library goes through `catch_unwind`. What each system is
/// ([`crate::System::info`]) is read from its type; the expression is not evaluated for it.
#[macro_export]
macro_rules! export_plugin {
    (library: $lib:literal, systems: { $( $($name:literal)|+ => $ctor:expr ),+ $(,)? } $(,)?) => {
        #[doc(hidden)]
        pub mod __troupe_export {
            use super::*;
            use $crate::module::__private as p;

            extern "C" fn library_name() -> p::RStr<'static> {
                p::RStr::from_str($lib)
            }
            extern "C" fn set_logger(logger: $crate::HostLogger) {
                p::install_logger(logger, $lib);
            }
            extern "C" fn system_names() -> p::RVec<p::RString> {
                let mut v = p::RVec::new();
                $( $( v.push(p::RString::from($name)); )+ )+
                v
            }
            extern "C" fn system_info(name: p::RStr<'_>) -> p::ROption<$crate::SystemInfo> {
                let name = name.as_str();
                let mut first = true;
                $(
                    if (first && name.is_empty()) $( || name == $name )+ {
                        return p::RSome(p::info_of(&|| $ctor));
                    }
                    first = false;
                )+
                let _ = first;
                p::RNone
            }
            extern "C" fn new_system(
                name: p::RStr<'_>,
            ) -> p::RResult<$crate::ffi::SystemObj, $crate::ffi::SystemError> {
                let name = name.as_str();
                let made = ::std::panic::catch_unwind(|| -> Option<$crate::ffi::SystemObj> {
                    let mut first = true;
                    $(
                        if (first && name.is_empty()) $( || name == $name )+ {
                            return Some($crate::into_ffi($ctor));
                        }
                        first = false;
                    )+
                    let _ = first;
                    None
                });
                match made {
                    Ok(Some(system)) => p::ROk(system),
                    Ok(None) => p::RErr($crate::ffi::SystemError {
                        kind: $crate::ffi::ErrorKind::UNKNOWN_SYSTEM,
                        message: p::RString::from(format!(
                            "library {} has no system named {:?}; it offers: {}",
                            $lib,
                            name,
                            [$( $($name),+ ),+].join(", ")
                        )),
                    }),
                    Err(payload) => p::RErr($crate::ffi::SystemError {
                        kind: $crate::ffi::ErrorKind::PANICKED,
                        message: p::RString::from($crate::panic_message(&*payload)),
                    }),
                }
            }
            fn root_module() -> $crate::PluginModRef {
                use p::PrefixTypeTrait;
                $crate::PluginMod { library_name, set_logger, new_system, system_names, system_info }
                    .leak_into_prefix()
            }
            extern "C" fn erased_root_module() -> p::RootModuleResult {
                p::__call_root_module_loader(root_module)
            }
            #[export_name = "_1as_0lib_1header_0root_bmodule_bloader"]
            pub static LIB_HEADER: p::LibHeader = $crate::module::__lib_header(erased_root_module);
        }
    };
}

#[cfg(test)]
mod tests {
    #[test]
    fn export_symbol_matches_abi_stable() {
        assert_eq!(super::LIB_HEADER_SYMBOL, abi_stable::library::ROOT_MODULE_LOADER_NAME);
    }
}
