//! Property tests of the drop format: whatever bytes sit in `events/` (the
//! driven CLI can write there), reading them never panics, and a drop the
//! relay wrote reads back exactly, payload bytes verbatim.

use proptest::prelude::*;

use crate::{DropHeader, FORMAT, HookDrop};

fn header() -> impl Strategy<Value = DropHeader> {
    (any::<u64>(), ".{0,40}", ".{0,20}", ".{0,40}", any::<bool>()).prop_map(
        |(ts, task, cli, native, capture)| DropHeader {
            v: FORMAT,
            ts,
            task,
            cli,
            native,
            capture,
        },
    )
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..8192)) {
        let _ = HookDrop::from_bytes(&bytes);
    }

    #[test]
    fn a_drop_reads_back_as_written(
        header in header(),
        payload in prop::collection::vec(any::<u8>(), 0..4096),
    ) {
        let drop = HookDrop { header, payload };
        let bytes = drop.to_bytes().expect("serializes");
        prop_assert_eq!(HookDrop::from_bytes(&bytes).expect("reads back"), drop);
    }

    #[test]
    fn another_format_version_is_refused_by_name(v in any::<u32>().prop_filter("not ours", |v| *v != FORMAT)) {
        let bytes = format!("{{\"v\":{v},\"ts\":1,\"task\":\"t\",\"cli\":\"c\",\"native\":\"Stop\"}}\n{{}}");
        let err = HookDrop::from_bytes(bytes.as_bytes()).expect_err("refused");
        prop_assert!(err.to_string().contains(&v.to_string()), "{}", err);
    }
}
