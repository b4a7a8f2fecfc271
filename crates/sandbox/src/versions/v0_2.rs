//! `drover:adapter@0.2`, the latest version: the engine's own types.

wasmtime::component::bindgen!({
    world: "adapter",
    path: "../../wit",
    additional_derives: [PartialEq],
});
