//! Claims `drover:adapter@0.9.0`, a version from the future: the engine must
//! refuse it by its export names, before running any of its code.

wit_bindgen::generate!({
    inline: "
        package drover:adapter@0.9.0;

        interface cli {
            describe: func() -> string;
        }

        world adapter {
            export cli;
        }
    ",
});

struct Future;

impl exports::drover::adapter::cli::Guest for Future {
    fn describe() -> String {
        panic!("a component of an unhosted version must never run")
    }
}

export!(Future);
