//! (filled in by the reading work)
