//! (filled in by the config work)
