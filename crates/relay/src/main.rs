//! `drover-relay --cli NAME EVENT`: the fast hook relay `drover hooks
//! install` registers. It links only the `drover-relay` crate (no
//! WebAssembly runtime, no CLI framework), so a hook costs about a process
//! spawn; `drover hook` does the same work for older hook configs.

fn main() -> std::process::ExitCode {
    // `args_os`: an argument that is not UTF-8 must not panic the relay.
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    drover_relay::main(&args)
}
